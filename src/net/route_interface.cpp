#include "net/route_interface.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "net/address_text.hpp"
#include "util/unique_fd.hpp"

namespace aml {
namespace {

bool same_address(const sockaddr* a, const sockaddr* b) {
  if (a->sa_family != b->sa_family) return false;
  if (a->sa_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
  }
  return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                     &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
}

}  // namespace

RouteInterface route_interface_to(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), "9", &hints, &found); rc != 0) {
    return {"",
            "cannot resolve " + host + " here (" + gai_strerror(rc) + "): left to NCCL and Gloo",
            ""};
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> results(found, freeaddrinfo);
  UniqueFd fd(socket(found->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd || connect(fd.get(), found->ai_addr, found->ai_addrlen) != 0) {
    return {"", "no route to " + host + " (" + std::strerror(errno) + "): left to NCCL and Gloo",
            ""};
  }
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    return {"", std::string("getsockname failed: ") + std::strerror(errno), ""};
  }
  const sockaddr* source = reinterpret_cast<const sockaddr*>(&local);
  ifaddrs* interfaces = nullptr;
  if (getifaddrs(&interfaces) != 0)
    return {"", std::string("getifaddrs failed: ") + std::strerror(errno), ""};
  std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owned(interfaces, freeifaddrs);
  for (ifaddrs* it = interfaces; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr != nullptr && same_address(it->ifa_addr, source)) {
      return {it->ifa_name,
              "the route to " + host + " (" + address_text(found->ai_addr) + ") leaves through " +
                  it->ifa_name + " (" + address_text(source) + ")",
              address_text(source)};
    }
  }
  return {"", "no interface holds " + address_text(source) + ", the source address toward " + host,
          address_text(source)};
}

}  // namespace aml
