#include "store/core/dial.hpp"

#include <unistd.h>

namespace aml::store {

// A connected socket, or the reason none could be made within the timeout.
Result<int> dial(const std::string& host, int port, std::chrono::milliseconds timeout) {
  auto addresses = resolve_store(host, port);
  if (!addresses) return addresses.error();
  return dial(*addresses, host + ":" + std::to_string(port), TcpAddresses::Clock::now() + timeout);
}

Result<TcpAddresses> resolve_store(const std::string& host, int port) {
  std::string why;
  auto addresses = TcpAddresses::resolve(host, port, why);
  if (!addresses) {
    return invalid("store", host + ":" + std::to_string(port), "a reachable store (" + why + ")");
  }
  return *addresses;
}

Result<int> dial(const TcpAddresses& addresses, const std::string& where,
                 TcpAddresses::Clock::time_point deadline) {
  std::string why;
  // Node 0's store may not be up yet: keep trying until the deadline.
  do {
    UniqueFd fd = addresses.connect(deadline, false, why);
    if (fd) return fd.release();
    if (TcpAddresses::Clock::now() < deadline) usleep(20000);
  } while (TcpAddresses::Clock::now() < deadline);
  return invalid("store", where, "a store accepting connections (" + why + ")");
}

}  // namespace aml::store
