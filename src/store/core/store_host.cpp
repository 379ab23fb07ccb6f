#include "store/core/store_host.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace aml {

std::uint64_t raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    // A hard limit of "unlimited" is not a number setrlimit takes for descriptors: the
    // kernel's own ceiling (fs.nr_open) is, and 1 << 20 is its default.
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? rlim_t{1} << 20 : limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

namespace {

void log_to_stderr(store::ServerOptions& options, const std::string& speaker) {
  options.log = [speaker](const std::string& line) {
    // One write a line: it does not interleave with the main thread's console output.
    const std::string text = speaker + ": " + line + "\n";
    [[maybe_unused]] ssize_t n = write(STDERR_FILENO, text.data(), text.size());
  };
}

}  // namespace

Result<std::unique_ptr<StoreHost>> StoreHost::start(const std::string& bind_address, int port,
                                                    const std::string& token,
                                                    const store::ServerAuth& auth,
                                                    const std::string& role,
                                                    const std::string& speaker, Serving serving) {
  store::ServerOptions options;
  options.token = token;
  options.auth = auth;
  return start_with(bind_address, port, std::move(options), role, speaker, serving);
}

Result<std::unique_ptr<StoreHost>> StoreHost::start_workers_store(
    const std::string& bind_address, int port, std::shared_ptr<const store::AdmittedHosts> admitted,
    const std::string& role, const std::string& speaker, Serving serving) {
  store::ServerOptions options;
  options.door = store::Door::torch;
  options.admitted = std::move(admitted);
  return start_with(bind_address, port, std::move(options), role, speaker, serving);
}

Result<std::unique_ptr<StoreHost>> StoreHost::start_with(const std::string& bind_address, int port,
                                                         store::ServerOptions options,
                                                         const std::string& role,
                                                         const std::string& speaker,
                                                         Serving serving) {
  raise_descriptor_limit();
  log_to_stderr(options, speaker);
  auto server = store::StoreServer::listen(bind_address, port, std::move(options));
  if (!server) {
    Error error = server.error();
    error.expected += "; " + role;
    return error;
  }
  return std::unique_ptr<StoreHost>(new StoreHost(std::move(*server), nullptr, serving));
}

Result<std::unique_ptr<StoreHost>> StoreHost::start_behind(
    std::shared_ptr<store::TorchDoorway> doorway, int port,
    std::shared_ptr<const store::AdmittedHosts> admitted, const std::string& speaker) {
  store::ServerOptions options;
  options.door = store::Door::torch;
  options.admitted = admitted;
  log_to_stderr(options, speaker);
  auto server = store::StoreServer::behind_doorway(port, std::move(options));
  if (!server) return server.error();
  doorway->open(server->get(), std::move(admitted));
  return std::unique_ptr<StoreHost>(new StoreHost(std::move(*server), std::move(doorway)));
}

StoreHost::StoreHost(std::unique_ptr<store::StoreServer> server,
                     std::shared_ptr<store::TorchDoorway> doorway, Serving serving)
    : server_(std::move(server)), doorway_(std::move(doorway)) {
  if (serving == Serving::now) serve();
}

void StoreHost::serve() {
  if (thread_) return;
  thread_.emplace([server = server_.get()] { server->run(); },
                  [server = server_.get()] { server->stop(); });
}

StoreHost::~StoreHost() {
  if (doorway_) doorway_->close();
}

Result<std::unique_ptr<RelayHost>> RelayHost::start(const std::string& store_host, int store_port,
                                                    const std::string& listen_address, int port) {
  auto relay = store::WorkerStoreRelay::open(store_host, store_port, listen_address, port);
  if (!relay) return relay.error();
  return std::unique_ptr<RelayHost>(new RelayHost(std::move(*relay)));
}

RelayHost::RelayHost(std::unique_ptr<store::WorkerStoreRelay> relay)
    : relay_(std::move(relay)),
      thread_([relay = relay_.get()] { relay->run(); }, [relay = relay_.get()] { relay->stop(); }) {
}

}  // namespace aml
