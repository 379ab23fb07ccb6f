// A TCP connection to a store (node 0's, or the workers' store a relay carries to), retried
// until the deadline: the store may not be listening yet.
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <string>

#include "net/tcp_connect.hpp"

namespace aml::store {

// A connected, blocking socket with TCP_NODELAY, or why none could be made within `timeout`.
Result<int> dial(const std::string& host, int port, std::chrono::milliseconds timeout);
// A store's addresses resolved once, for a caller that dials them again and again.
Result<TcpAddresses> resolve_store(const std::string& host, int port);
// The same connection to them (`where` names them in the error).
Result<int> dial(const TcpAddresses& addresses, const std::string& where,
                 TcpAddresses::Clock::time_point deadline);

}  // namespace aml::store
