// The network interface the kernel would use to reach a host: the one multi-node NCCL and
// Gloo should bind to (DESIGN §3).
#pragma once

#include <string>

namespace aml {

struct RouteInterface {
  std::string ifname;   // "" when it could not be found
  std::string reason;   // "route to 10.0.0.4 leaves through eth0 (10.0.0.5)" or why not
  std::string address;  // this host's address on it (the source address): "10.0.0.5"
};

// Resolves `host`, asks the kernel for the route (a UDP connect sends nothing), and maps the
// source address it chose to an interface name.
RouteInterface route_interface_to(const std::string& host);

}  // namespace aml
