#include "net/address_text.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace aml {

std::string address_text(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw =
      addr->sa_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(addr)->sin_addr)
          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr);
  inet_ntop(addr->sa_family, raw, text, sizeof(text));
  return text;
}

}  // namespace aml
