#include "store/dial.hpp"

#include <unistd.h>

#include "net/tcp_connect.hpp"

namespace aml::store {

// A connected socket, or the reason none could be made within the timeout.
Result<int> dial(const std::string& host, int port, std::chrono::milliseconds timeout) {
  const std::string where = host + ":" + std::to_string(port);
  std::string why;
  auto addresses = TcpAddresses::resolve(host, port, why);
  if (!addresses) return invalid("store", where, "a reachable store (" + why + ")");
  const auto deadline = TcpAddresses::Clock::now() + timeout;
  // Node 0's store may not be up yet: keep trying until the deadline.
  do {
    UniqueFd fd = addresses->connect(deadline, false, why);
    if (fd) return fd.release();
    if (TcpAddresses::Clock::now() < deadline) usleep(20000);
  } while (TcpAddresses::Clock::now() < deadline);
  return invalid("store", where, "a store accepting connections (" + why + ")");
}

}  // namespace aml::store
