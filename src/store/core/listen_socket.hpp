// A listening TCP socket for the store's servers (the store, a node's relay to the workers'
// store): on an IPv4 address, non-blocking, at the port asked for or one the kernel picks.
#pragma once

#include <aml/error.hpp>
#include <cstdint>
#include <string>

#include "util/unique_fd.hpp"

namespace aml::store {

struct ListeningSocket {
  UniqueFd fd;
  int port = 0;  // the one it listens at (the kernel's choice for port 0)
};

// `what` names the listener in an error ("store": "store bind=0.0.0.0:15028: ...").
Result<ListeningSocket> listen_tcp(const std::string& address, int port, const std::string& what);

// The longest accept queue a listening socket gets in this network namespace
// (net.core.somaxconn); 0 where it cannot be read. Connections past it that come at once are
// dropped, and each waits out a SYN retransmit (1 s, then 3 s...).
std::uint64_t accept_queue_limit();

}  // namespace aml::store
