// A TCP connection to a store (node 0's, or the workers' store a relay carries to), retried
// until the deadline: the store may not be listening yet.
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <string>

namespace aml::store {

// A connected, blocking socket with TCP_NODELAY, or why none could be made within `timeout`.
Result<int> dial(const std::string& host, int port, std::chrono::milliseconds timeout);

}  // namespace aml::store
