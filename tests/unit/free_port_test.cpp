// A port picked by free_tcp_port is held by this process until released (net/free_port.hpp):
// no other pick is given it, its user binds and listens on it, a bind that does not share fails.
#include "net/free_port.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <set>

#include "util/unique_fd.hpp"

namespace aml {
namespace {

// Binds 127.0.0.1:port (SO_REUSEADDR as asked) and listens; whether both worked.
bool binds(int port, bool reuse) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  if (reuse) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  return bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
         listen(fd.get(), 1) == 0;
}

TEST(FreePort, NoOtherPickIsGivenAPortHeld) {
  std::set<int> picked;
  for (int i = 0; i < 600; ++i) {
    auto port = free_tcp_port();
    ASSERT_TRUE(port) << port.error().message();
    EXPECT_TRUE(picked.insert(*port).second) << "port " << *port << " was picked twice";
  }
  for (int port : picked) release_tcp_port(port);
}

TEST(FreePort, ItsUserBindsItWhileHeldAndAStrangerOnlyOnceReleased) {
  auto port = free_tcp_port();
  ASSERT_TRUE(port) << port.error().message();
  EXPECT_FALSE(binds(*port, false)) << "a bind that does not share took a held port";
  EXPECT_TRUE(binds(*port, true)) << "the port's user could not listen on it";
  release_tcp_port(*port);
  EXPECT_TRUE(binds(*port, false)) << "a released port stayed held";
  release_tcp_port(*port);  // not held: nothing happens
}

}  // namespace
}  // namespace aml
