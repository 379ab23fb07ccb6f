#include "net/free_port.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "util/unique_fd.hpp"

namespace aml {
namespace {

struct HeldPorts {
  std::mutex lock;
  std::map<int, UniqueFd> sockets;
  int gap_first = 0, gap_last = -1;  // keep_ports_free_after's
};

HeldPorts& held_ports() {
  static auto* held = new HeldPorts;  // never destroyed: a reservation lasts until exit
  return *held;
}

// One port the kernel picks, bound (not listening) by `fd`.
Result<int> bind_any_port(UniqueFd& fd) {
  fd.reset(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
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
  return ntohs(addr.sin_port);
}

}  // namespace

Result<int> free_tcp_port() {
  HeldPorts& held = held_ports();
  // A pick inside the gap stays bound while the next is made (so the kernel moves on), and
  // goes once a port outside it is found.
  std::vector<UniqueFd> passed_over;
  for (int tries = 0; tries <= kPortsKeptFree; ++tries) {
    UniqueFd fd;
    auto port = bind_any_port(fd);
    if (!port) return port.error();
    std::lock_guard guard(held.lock);
    if (*port >= held.gap_first && *port <= held.gap_last) {
      passed_over.push_back(std::move(fd));
      continue;
    }
    held.sockets[*port] = std::move(fd);
    return *port;
  }
  return invalid("free port", "every pick next to MASTER_PORT",
                 "a free local TCP port outside MASTER_PORT+1 to MASTER_PORT+" +
                     std::to_string(kPortsKeptFree));
}

void keep_ports_free_after(int port) {
  HeldPorts& held = held_ports();
  std::lock_guard guard(held.lock);
  held.gap_first = port + 1;
  held.gap_last = port + kPortsKeptFree;
}

void release_tcp_port(int port) {
  HeldPorts& held = held_ports();
  std::lock_guard guard(held.lock);
  held.sockets.erase(port);
}

}  // namespace aml
