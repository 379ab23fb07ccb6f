// A TCP connection by a deadline (net/tcp_connect.hpp): a listener is reached, blocking or not
// as asked; a closed port and a name that does not resolve say why. (A host that never answers
// needs a network of its own: tests/blackbox/silent_host_test.sh.)
#include "net/tcp_connect.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

#include "store/core/listen_socket.hpp"

namespace aml {
namespace {

TcpAddresses::Clock::time_point soon() {
  return TcpAddresses::Clock::now() + std::chrono::seconds(5);
}

TEST(TcpConnect, ReachesAListenerBlockingOrNotAsAsked) {
  auto listening = store::listen_tcp("127.0.0.1", 0, "test listener");
  ASSERT_TRUE(listening) << listening.error().message();
  std::string why;
  auto addresses = TcpAddresses::resolve("127.0.0.1", listening->port, why);
  ASSERT_TRUE(addresses) << why;
  for (bool nonblocking : {false, true}) {
    UniqueFd fd = addresses->connect(soon(), nonblocking, why);
    ASSERT_TRUE(fd) << why;
    EXPECT_EQ(why, "");
    EXPECT_EQ((fcntl(fd.get(), F_GETFL) & O_NONBLOCK) != 0, nonblocking);
    EXPECT_NE(fcntl(fd.get(), F_GETFD) & FD_CLOEXEC, 0);
  }
}

TEST(TcpConnect, AClosedPortSaysRefused) {
  int port = 0;
  {
    auto listening = store::listen_tcp("127.0.0.1", 0, "test listener");
    ASSERT_TRUE(listening) << listening.error().message();
    port = listening->port;
  }  // closed: nothing listens there now
  std::string why;
  auto addresses = TcpAddresses::resolve("127.0.0.1", port, why);
  ASSERT_TRUE(addresses) << why;
  EXPECT_FALSE(addresses->connect(soon(), false, why));
  EXPECT_EQ(why, "Connection refused");
}

TEST(TcpConnect, ANameThatDoesNotResolveSaysWhy) {
  std::string why;
  EXPECT_FALSE(TcpAddresses::resolve("no-such-host.invalid", 80, why));
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace aml
