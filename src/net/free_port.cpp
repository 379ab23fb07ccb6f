#include "net/free_port.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "util/unique_fd.hpp"

namespace aml {

Result<int> free_tcp_port() {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  auto fail = [] { return invalid("free port", std::strerror(errno), "a free local TCP port"); };
  if (!fd) return fail();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  socklen_t length = sizeof(addr);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return fail();
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &length) != 0) return fail();
  return static_cast<int>(ntohs(addr.sin_port));
}

}  // namespace aml
