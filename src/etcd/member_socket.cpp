#include "etcd/member_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "etcd/socket_wait.hpp"
#include "net/tcp_connect.hpp"

namespace aml::etcd {

Result<MemberSocket> MemberSocket::connect(const std::string& host, int port,
                                           Clock::time_point deadline,
                                           const std::shared_ptr<TlsContext>& tls,
                                           std::string_view alpn) {
  const std::string where = host + ":" + std::to_string(port);
  std::string why;
  auto addresses = TcpAddresses::resolve(host, port, why);
  if (!addresses) return invalid("etcd", where, "a host that resolves (" + why + ")");
  UniqueFd fd = addresses->connect(deadline, true, why);
  if (fd) {
    const int raw = fd.get();
    MemberSocket socket{std::move(fd), nullptr, where};
    if (tls) {
      auto stream = TlsStream::connect(tls, raw, host, where, deadline, alpn);
      if (!stream) return stream.error();
      socket.tls = std::move(*stream);
    }
    return socket;
  }
  return invalid("etcd", where, "an etcd member accepting connections (" + why + ")");
}

Result<bool> MemberSocket::write_all(std::string_view left, Clock::time_point deadline) {
  while (tls && !left.empty()) {
    auto n = tls->write(left);
    if (!n) return n.error();
    if (*n == 0 && !ready(fd.get(), tls->wants(), deadline)) {
      return invalid("etcd", where, "to take a request in time");
    }
    left.remove_prefix(*n);
  }
  while (!left.empty()) {
    if (!ready(fd.get(), POLLOUT, deadline)) {
      return invalid("etcd", where, "to take a request in time");
    }
    ssize_t n = send(fd.get(), left.data(), left.size(), MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      return invalid("etcd", where,
                     std::string("to take a request (") + std::strerror(errno) + ")");
    }
    left.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

Result<std::size_t> MemberSocket::read_some(char* buffer, std::size_t size,
                                            Clock::time_point deadline) {
  if (tls) {
    // Decrypted bytes that OpenSSL holds come before the socket is polled (it may have none).
    for (;;) {
      auto n = tls->read(buffer, size);
      if (!n || *n > 0) return n;
      if (!ready(fd.get(), tls->wants(), deadline)) return std::size_t{0};
    }
  }
  if (!ready(fd.get(), POLLIN, deadline)) return std::size_t{0};
  for (;;) {
    ssize_t n = recv(fd.get(), buffer, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return std::size_t{0};
    if (n < 0)
      return invalid("etcd", where, std::string("an answer (") + std::strerror(errno) + ")");
    if (n == 0) return invalid("etcd", where, "an answer (the connection closed)");
    return static_cast<std::size_t>(n);
  }
}

std::string MemberSocket::local_address() const {
  sockaddr_storage address{};
  socklen_t size = sizeof(address);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &size) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw =
      address.ss_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&address)->sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&address)->sin_addr);
  return inet_ntop(address.ss_family, raw, text, sizeof(text)) ? text : "";
}

}  // namespace aml::etcd
