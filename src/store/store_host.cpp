#include "store/store_host.hpp"

#include <signal.h>

namespace aml {

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
  thread_ = std::thread([this] { server_->run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

StoreHost::~StoreHost() {
  server_->stop();
  thread_.join();
}

}  // namespace aml
