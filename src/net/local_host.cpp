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
  std::string by_name;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0) {
    const std::string self = name;
    const std::string short_self = self.substr(0, self.find('.'));
    if (strcasecmp(host.c_str(), self.c_str()) == 0 ||
        strcasecmp(host.c_str(), short_self.c_str()) == 0) {
      by_name = host + " is this host's name";
    }
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), "0", &hints, &found); rc != 0) {
    if (!by_name.empty()) return {true, by_name, ""};
    return {false, "cannot resolve " + host + " here (" + gai_strerror(rc) + ")", ""};
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> results(found, freeaddrinfo);
  for (const addrinfo* it = found; it != nullptr; it = it->ai_next) {
    if (!bindable(it)) continue;
    const std::string address = address_text(it->ai_addr);
    if (!by_name.empty()) return {true, by_name, address};
    return {true,
            address == host ? address + " is an address of this host"
                            : host + " resolves to " + address + ", an address of this host",
            address};
  }
  if (!by_name.empty()) return {true, by_name, ""};
  return {false, host + " (" + address_text(found->ai_addr) + ") is not an address of this host",
          ""};
}

std::string listen_address_for(const std::string& master_addr, const LocalHost& here) {
  in_addr ipv4{};
  if (!here.local || inet_pton(AF_INET, here.address.c_str(), &ipv4) != 1) return "0.0.0.0";
  const bool loopback = here.address.starts_with("127.");
  const bool said_so = here.address == master_addr || master_addr == "localhost";
  return loopback && !said_so ? "0.0.0.0" : here.address;
}

}  // namespace aml
