#include "net/free_port.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "util/unique_fd.hpp"

namespace aml {
namespace {

struct HeldPorts {
  std::mutex lock;
  std::map<int, UniqueFd> sockets;
};

HeldPorts& held_ports() {
  static auto* held = new HeldPorts;  // never destroyed: a reservation lasts until exit
  return *held;
}

}  // namespace

Result<int> free_tcp_port() {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  auto fail = [] { return invalid("free port", std::strerror(errno), "a free local TCP port"); };
  if (!fd) return fail();
  // Shared with the one who binds it later; the kernel's own picks still pass it by while held.
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  socklen_t length = sizeof(addr);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return fail();
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &length) != 0) return fail();
  const int port = ntohs(addr.sin_port);
  HeldPorts& held = held_ports();
  std::lock_guard guard(held.lock);
  held.sockets[port] = std::move(fd);
  return port;
}

void release_tcp_port(int port) {
  HeldPorts& held = held_ports();
  std::lock_guard guard(held.lock);
  held.sockets.erase(port);
}

}  // namespace aml
