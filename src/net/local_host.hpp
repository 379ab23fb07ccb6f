// Whether a host name or address names this machine: an elastic job's node at the rendezvous
// endpoint serves the store (DESIGN §5).
#pragma once

#include <string>

namespace aml {

struct LocalHost {
  bool local = false;
  std::string reason;   // "10.0.0.4 is an address of this host", "b-worker-0 resolves to 10.0.0.9"
  std::string address;  // the address of this host it resolves to, where one does
};

// True when `host` is this machine's host name (short or full), or resolves to an address
// that a socket here can bind to (one of its interfaces', loopback included).
LocalHost local_host(const std::string& host);

// Where a server for the job's `master_addr` listens on this host (`here` = local_host of it):
// that address where it is one of this host's IPv4 addresses or a name for one (a pod's IP);
// "0.0.0.0" (every interface) for a name that resolves to loopback here while the others reach
// this host by another address (Debian's /etc/hosts names the host 127.0.1.1), an IPv6
// address, or a name for another host (a service address in front of this one).
std::string listen_address_for(const std::string& master_addr, const LocalHost& here);

}  // namespace aml
