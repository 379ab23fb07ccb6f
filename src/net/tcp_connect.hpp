// A TCP connection by a deadline: the store's clients, the relays and etcd's members all dial
// through it. A host that drops packets (gone, or behind a firewall) never answers a connect,
// and the kernel alone would wait about two minutes whatever the caller's timeout.
#pragma once

#include <netdb.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "util/unique_fd.hpp"

namespace aml {

class TcpAddresses {
 public:
  using Clock = std::chrono::steady_clock;

  // host:port's addresses (resolved once: a caller that retries asks its resolver once), or
  // nothing and the resolver's reason in `why`.
  static std::optional<TcpAddresses> resolve(const std::string& host, int port, std::string& why);

  // A connection (TCP_NODELAY, close-on-exec, non-blocking where asked) to the first address
  // that takes one, no connect waiting past the deadline; an empty fd and the last address's
  // reason in `why` otherwise ("no answer" where it timed out).
  UniqueFd connect(Clock::time_point deadline, bool nonblocking, std::string& why) const;

 private:
  explicit TcpAddresses(std::shared_ptr<addrinfo> list) : list_(std::move(list)) {}
  std::shared_ptr<addrinfo> list_;
};

}  // namespace aml
