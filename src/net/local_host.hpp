// Whether a host name or address names this machine: an elastic job's node at the rendezvous
// endpoint serves the store (DESIGN §5).
#pragma once

#include <string>

namespace aml {

struct LocalHost {
  bool local = false;
  std::string reason;  // "10.0.0.4 is an address of this host", "b-worker-0 resolves to 10.0.0.9"
};

// True when `host` is this machine's host name (short or full), or resolves to an address
// that a socket here can bind to (one of its interfaces', loopback included).
LocalHost local_host(const std::string& host);

}  // namespace aml
