// The rendezvous store alone, for benchmarks/store_rendezvous.py (the launchers' door) and
// benchmarks/torch_store.py (torch's door, the workers' store): serves until SIGTERM, then
// prints the peak connection count, the server's memory per connection at that peak, and the
// whole process's peak resident memory.
//   usage: store_bench_server PORT TOKEN [torch|shared]
//   torch: torch's door on a socket of its own; shared: as node 0 serves it, the launchers'
//   door on the socket and torch's behind it (a connection's first bytes choose), each on a
//   thread of its own.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "peak_memory.hpp"
#include "store/core/store_server.hpp"

namespace {

volatile sig_atomic_t stop = 0;

long resident_kib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) return 2;
  signal(SIGTERM, [](int) { stop = 1; });
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;  // a descriptor a client
  setrlimit(RLIMIT_NOFILE, &limit);
  aml::store::ServerOptions options;
  options.token = argv[2];
  const std::string mode = argc == 4 ? argv[3] : "";
  if (mode == "torch") {
    options.door = aml::store::Door::torch;
    options.admitted = std::make_shared<aml::store::AdmittedHosts>();
  }
  if (mode == "shared") options.torch_doorway = std::make_shared<aml::store::TorchDoorway>();
  auto server = aml::store::StoreServer::listen("127.0.0.1", std::atoi(argv[1]), options);
  if (!server) {
    std::fprintf(stderr, "%s\n", server.error().message().c_str());
    return 1;
  }
  // shared: the workers' store behind the doorway, serving on a thread of its own.
  std::unique_ptr<aml::store::StoreServer> behind;
  std::thread behind_thread;
  if (mode == "shared") {
    aml::store::ServerOptions torch;
    torch.door = aml::store::Door::torch;
    torch.admitted = std::make_shared<aml::store::AdmittedHosts>();
    auto made = aml::store::StoreServer::behind_doorway((*server)->port(), torch);
    if (!made) return 1;
    behind = std::move(*made);
    options.torch_doorway->open(behind.get(), torch.admitted);
    behind_thread = std::thread([&] { behind->run(); });
  }
  auto connections = [&] {
    return (*server)->connection_count() + (behind ? behind->connection_count() : 0);
  };
  std::printf("port %d\n", (*server)->port());
  std::fflush(stdout);
  const long idle_kib = resident_kib();
  std::size_t peak = 0;
  long peak_kib = idle_kib;
  std::size_t peak_bookkeeping = 0;
  while (!stop) {
    (*server)->poll_once(100);
    if (connections() > peak) {
      peak = connections();
      peak_kib = resident_kib();
      peak_bookkeeping = behind ? behind->connection_memory() : (*server)->connection_memory();
    }
  }
  if (behind) {
    options.torch_doorway->close();
    behind->stop();
    behind_thread.join();
  }
  std::printf(
      "peak_connections %zu rss_per_connection_bytes %ld bookkeeping_per_connection_bytes %zu "
      "peak_rss_kib %ld\n",
      peak, peak ? (peak_kib - idle_kib) * 1024 / static_cast<long>(peak) : 0, peak_bookkeeping,
      peak_resident_kib());
  return 0;
}
