#include "store/core/listen_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

namespace aml::store {

Result<ListeningSocket> listen_tcp(const std::string& address, int port, const std::string& what) {
  const std::string where = address + ":" + std::to_string(port);
  auto failed = [&](const char* step) {
    return invalid(what + " " + step, where, std::string("to work (") + std::strerror(errno) + ")");
  };
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    return invalid(what + " address", address, "an IPv4 address to listen on");
  }
  ListeningSocket listening;
  listening.fd.reset(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listening.fd) return failed("socket");
  int one = 1;
  setsockopt(listening.fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(listening.fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return failed("bind");
  }
  // As long a queue of connections not yet accepted as the kernel allows (net.core.somaxconn:
  // a larger backlog is cut to it): a job's ranks connect at once, and a connection the full
  // queue drops waits out a SYN retransmit (1 s, then 3 s, 7 s...). glibc's SOMAXCONN (4096)
  // was the ceiling even where the kernel allowed more.
  if (::listen(listening.fd.get(), std::numeric_limits<int>::max()) != 0) return failed("listen");
  socklen_t length = sizeof(addr);
  getsockname(listening.fd.get(), reinterpret_cast<sockaddr*>(&addr), &length);
  listening.port = ntohs(addr.sin_port);
  return listening;
}

std::uint64_t accept_queue_limit() {
  std::ifstream file("/proc/sys/net/core/somaxconn");
  std::uint64_t limit = 0;
  if (!(file >> limit)) return 0;
  return limit;
}

}  // namespace aml::store
