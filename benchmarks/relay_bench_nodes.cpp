// K simulated nodes' relays to the workers' store (store/relay/worker_store_relay.hpp) in one
// process, for benchmarks/torch_store.py: each connects to the store at PORT and listens on
// loopback; one thread drives them all (each relay's epoll set sits in this process's own). Prints
// their ports on one line, serves until SIGTERM, then prints the process's peak resident memory.
//   usage: relay_bench_nodes PORT K
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "peak_memory.hpp"
#include "store/relay/worker_store_relay.hpp"

namespace {

volatile sig_atomic_t stop = 0;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  signal(SIGTERM, [](int) { stop = 1; });
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  const int port = std::atoi(argv[1]);
  const int count = std::atoi(argv[2]);
  const int all = epoll_create1(0);
  std::vector<std::unique_ptr<aml::store::WorkerStoreRelay>> relays;
  std::string ports = "ports";
  for (int i = 0; i < count; ++i) {
    auto relay = aml::store::WorkerStoreRelay::open("127.0.0.1", port, "127.0.0.1", 0);
    if (!relay) {
      std::fprintf(stderr, "relay %d: %s\n", i, relay.error().message().c_str());
      return 1;
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u32 = static_cast<std::uint32_t>(i);
    epoll_ctl(all, EPOLL_CTL_ADD, (*relay)->epoll_fd(), &event);
    // Appended piece by piece: gcc 12 at -O3 warns falsely (-Wrestrict) on " " + std::string.
    ports += ' ';
    ports += std::to_string((*relay)->port());
    relays.push_back(std::move(*relay));
  }
  std::printf("%s\n", ports.c_str());
  std::fflush(stdout);
  std::vector<epoll_event> events(1024);
  while (!stop) {
    const int n = epoll_wait(all, events.data(), static_cast<int>(events.size()), 100);
    for (int i = 0; i < n; ++i) relays[events[i].data.u32]->poll_once(0);
  }
  std::printf("peak_rss_kib %ld\n", peak_resident_kib());
  return 0;
}
