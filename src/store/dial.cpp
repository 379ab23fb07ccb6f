#include "store/dial.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace aml::store {

// A connected socket, or the reason none could be made within the timeout.
Result<int> dial(const std::string& host, int port, std::chrono::milliseconds timeout) {
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return invalid("store", where, std::string("a reachable store (") + gai_strerror(rc) + ")");
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "no address";
  // Node 0's store may not be up yet: keep trying until the deadline.
  do {
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) continue;
      if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return fd;
      }
      last_error = std::strerror(errno);
      ::close(fd);
    }
    if (std::chrono::steady_clock::now() < deadline) usleep(20000);
  } while (std::chrono::steady_clock::now() < deadline);
  return invalid("store", where, "a store accepting connections (" + last_error + ")");
}

}  // namespace aml::store
