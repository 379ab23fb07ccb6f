// Where node 0's store listens (net/local_host.hpp): the job's address, where that is safe.
#include <gtest/gtest.h>

#include "net/local_host.hpp"

namespace aml {
namespace {

LocalHost here(std::string address) { return {true, "", std::move(address)}; }

TEST(ListenAddress, AnAddressOfThisHostOrANameForOne) {
  EXPECT_EQ(listen_address_for("10.0.0.4", here("10.0.0.4")), "10.0.0.4");
  EXPECT_EQ(listen_address_for("job-worker-0", here("10.244.1.7")), "10.244.1.7");  // a pod's IP
  EXPECT_EQ(listen_address_for("127.0.0.1", here("127.0.0.1")), "127.0.0.1");
  EXPECT_EQ(listen_address_for("localhost", here("127.0.0.1")), "127.0.0.1");
}

TEST(ListenAddress, EveryInterfaceWhereTheOthersMayReachThisHostOtherwise) {
  // Debian's /etc/hosts: the host's own name is 127.0.1.1 here, its real address elsewhere.
  EXPECT_EQ(listen_address_for("node1", here("127.0.1.1")), "0.0.0.0");
  EXPECT_EQ(listen_address_for("fe80::1", here("fe80::1")), "0.0.0.0");
  EXPECT_EQ(listen_address_for("svc-master", LocalHost{false, "", ""}), "0.0.0.0");
  EXPECT_EQ(listen_address_for("node1", LocalHost{true, "node1 is this host's name", ""}),
            "0.0.0.0");
}

}  // namespace
}  // namespace aml
