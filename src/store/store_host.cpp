#include "store/store_host.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace aml {
namespace {

constexpr rlim_t kWantedDescriptors = 65536;

// A store takes a descriptor a connection: a thousand nodes, or a flood of strangers beside
// them, need more than the usual soft limit of 1,024. Raised towards the hard limit, which
// the process may do by itself.
void raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= kWantedDescriptors) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? kWantedDescriptors
                                                   : std::min(limit.rlim_max, kWantedDescriptors);
  (void)setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

Result<std::unique_ptr<StoreHost>> StoreHost::start(const std::string& bind_address, int port,
                                                    const std::string& token,
                                                    const store::ServerAuth& auth,
                                                    const std::string& role,
                                                    const std::string& speaker) {
  store::ServerOptions options;
  options.token = token;
  options.auth = auth;
  return start_with(bind_address, port, std::move(options), role, speaker);
}

Result<std::unique_ptr<StoreHost>> StoreHost::start_workers_store(
    const std::string& bind_address, int port, std::shared_ptr<const store::AdmittedHosts> admitted,
    const std::string& role, const std::string& speaker) {
  store::ServerOptions options;
  options.door = store::Door::torch;
  options.admitted = std::move(admitted);
  return start_with(bind_address, port, std::move(options), role, speaker);
}

Result<std::unique_ptr<StoreHost>> StoreHost::start_with(const std::string& bind_address, int port,
                                                         store::ServerOptions options,
                                                         const std::string& role,
                                                         const std::string& speaker) {
  raise_descriptor_limit();
  options.log = [speaker](const std::string& line) {
    // One write a line: it does not interleave with the main thread's console output.
    const std::string text = speaker + ": " + line + "\n";
    [[maybe_unused]] ssize_t n = write(STDERR_FILENO, text.data(), text.size());
  };
  auto server = store::StoreServer::listen(bind_address, port, std::move(options));
  if (!server) {
    Error error = server.error();
    error.expected += "; " + role;
    return error;
  }
  return std::unique_ptr<StoreHost>(new StoreHost(std::move(*server)));
}

StoreHost::StoreHost(std::unique_ptr<store::StoreServer> server)
    : server_(std::move(server)),
      thread_([server = server_.get()] { server->run(); },
              [server = server_.get()] { server->stop(); }) {}

StoreHost::~StoreHost() = default;

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
