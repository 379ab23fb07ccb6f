#include "store/store_host.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace aml {
namespace {

constexpr int kStorePriority = -10;  // nice value: well ahead of nice-0 workers, below -20

}  // namespace

Result<std::unique_ptr<StoreHost>> StoreHost::start(int port, const std::string& token,
                                                    const std::string& role) {
  store::ServerOptions options;
  options.token = token;
  auto server = store::StoreServer::listen("0.0.0.0", port, std::move(options));
  if (!server) {
    Error error = server.error();
    error.expected += "; " + role;
    return error;
  }
  return std::unique_ptr<StoreHost>(new StoreHost(std::move(*server)));
}

StoreHost::StoreHost(std::unique_ptr<store::StoreServer> server) : server_(std::move(server)) {
  // Signals are the main thread's business (its signalfd): none may land here.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  thread_ = std::thread([this] {
    // Every node's rendezvous and liveness go through this thread: it must not wait behind
    // this node's own busy workers (data loaders at full CPU). Allowed only to root (and
    // CAP_SYS_NICE): elsewhere it keeps the launcher's priority. The workers, started by
    // the main thread, keep theirs.
    // (The thread's id by system call: glibc has gettid() only since 2.30, releases need 2.17.)
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kStorePriority);
    server_->run();
  });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

StoreHost::~StoreHost() {
  server_->stop();
  thread_.join();
}

}  // namespace aml
