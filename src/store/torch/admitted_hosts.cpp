#include "store/torch/admitted_hosts.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>

#include "net/address_text.hpp"

namespace aml::store {

// Read at the first connection from an address not loopback's, under the lock: a store whose
// workers are all on loopback (one node) never lists the interfaces (a netlink dump on the way
// to the workers' spawn).
void AdmittedHosts::read_own_addresses() const {
  if (own_read_) return;
  own_read_ = true;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET) {
      addresses_.insert(address_text(i->ifa_addr));
    }
  }
  freeifaddrs(list);
}

void AdmittedHosts::add(const std::string& host) {
  if (host.empty()) return;
  in_addr numeric{};
  if (inet_pton(AF_INET, host.c_str(), &numeric) == 1) {
    std::lock_guard lock(mutex_);
    addresses_.insert(host);
    return;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return;
  std::lock_guard lock(mutex_);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next)
    addresses_.insert(address_text(a->ai_addr));
  freeaddrinfo(found);
}

bool AdmittedHosts::admits(const std::string& address) const {
  // Loopback is this host's whatever its interfaces say (127.0.1.1 is Debian's host name).
  if (address.rfind("127.", 0) == 0) return true;
  std::lock_guard lock(mutex_);
  read_own_addresses();
  return addresses_.count(address) > 0;
}

}  // namespace aml::store
