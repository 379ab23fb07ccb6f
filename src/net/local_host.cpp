#include "net/local_host.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "net/address_text.hpp"
#include "util/unique_fd.hpp"

namespace aml {
namespace {

// A bind to an address only succeeds where an interface holds it: the kernel's own answer,
// with no interface list to walk.
bool bindable(const addrinfo* address) {
  UniqueFd fd(socket(address->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  return fd && bind(fd.get(), address->ai_addr, address->ai_addrlen) == 0;
}

}  // namespace

LocalHost local_host(const std::string& host) {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0) {
    const std::string self = name;
    const std::string short_self = self.substr(0, self.find('.'));
    if (strcasecmp(host.c_str(), self.c_str()) == 0 ||
        strcasecmp(host.c_str(), short_self.c_str()) == 0) {
      return {true, host + " is this host's name"};
    }
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), "0", &hints, &found); rc != 0) {
    return {false, "cannot resolve " + host + " here (" + gai_strerror(rc) + ")"};
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> results(found, freeaddrinfo);
  for (const addrinfo* it = found; it != nullptr; it = it->ai_next) {
    if (!bindable(it)) continue;
    const std::string address = address_text(it->ai_addr);
    return {true, address == host ? address + " is an address of this host"
                                  : host + " resolves to " + address + ", an address of this host"};
  }
  return {false, host + " (" + address_text(found->ai_addr) + ") is not an address of this host"};
}

}  // namespace aml
