#include "net/tcp_connect.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace aml {
namespace {

// A connect given at least this long, even past the deadline: a loopback connect still in
// progress is done in microseconds, and a caller out of time should not fail it for that.
constexpr std::chrono::milliseconds kLeastWait{10};

// Whether the connect in progress on fd finished by the deadline (its error in `why` if not).
bool connected_by(int fd, TcpAddresses::Clock::time_point deadline, std::string& why) {
  pollfd ready{fd, POLLOUT, 0};
  for (;;) {
    const auto left = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   deadline - TcpAddresses::Clock::now()),
                               kLeastWait);
    const int n = poll(&ready, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = "no answer";
      return false;
    }
    break;
  }
  int error = 0;
  socklen_t size = sizeof(error);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
  if (error != 0) {
    why = std::strerror(error);
    return false;
  }
  return true;
}

}  // namespace

std::optional<TcpAddresses> TcpAddresses::resolve(const std::string& host, int port,
                                                  std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    why = gai_strerror(rc);
    return std::nullopt;
  }
  return TcpAddresses(std::shared_ptr<addrinfo>(found, freeaddrinfo));
}

UniqueFd TcpAddresses::connect(Clock::time_point deadline, bool nonblocking,
                               std::string& why) const {
  why = "no address";
  for (const addrinfo* a = list_.get(); a != nullptr; a = a->ai_next) {
    UniqueFd fd(socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) {
      why = std::strerror(errno);
      continue;
    }
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        why = std::strerror(errno);
        continue;
      }
      if (!connected_by(fd.get(), deadline, why)) continue;
    }
    int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (!nonblocking) fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    why.clear();
    return fd;
  }
  return UniqueFd();
}

}  // namespace aml
