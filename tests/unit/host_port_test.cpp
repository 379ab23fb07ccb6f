#include "topology/host_port.hpp"

#include <gtest/gtest.h>

namespace aml {
namespace {

HostPort split(std::string_view text) {
  auto hp = split_host_port("AZ_BATCH_MASTER_NODE", text);
  EXPECT_TRUE(hp.ok()) << text << ": " << (hp.ok() ? "" : hp.error().message());
  return hp.ok() ? *hp : HostPort{};
}

TEST(HostPort, HostAndPort) {
  HostPort hp = split("10.0.0.4:6000");
  EXPECT_EQ(hp.host, "10.0.0.4");
  EXPECT_EQ(hp.port, 6000);
}

TEST(HostPort, HostOnly) {
  HostPort hp = split("node-0.cluster");
  EXPECT_EQ(hp.host, "node-0.cluster");
  EXPECT_FALSE(hp.port);
}

TEST(HostPort, BracketedIpv6WithPort) {
  HostPort hp = split("[fd00::4]:6000");
  EXPECT_EQ(hp.host, "fd00::4");
  EXPECT_EQ(hp.port, 6000);
}

TEST(HostPort, BracketedIpv6WithoutPort) { EXPECT_EQ(split("[::1]").host, "::1"); }

TEST(HostPort, BareIpv6HasNoPort) {
  HostPort hp = split("fe80::1:2");
  EXPECT_EQ(hp.host, "fe80::1:2");
  EXPECT_FALSE(hp.port);
}

TEST(HostPort, BadValuesNameTheVariable) {
  for (const char* text : {"", ":6000", "host:", "host:0", "host:65536", "host:x", "[fd00::4",
                           "[fd00::4]x", "[host]:1", "a b:1", "[]:1"}) {
    auto hp = split_host_port("AZ_BATCH_MASTER_NODE", text);
    ASSERT_FALSE(hp.ok()) << "'" << text << "' should not parse";
    EXPECT_NE(hp.error().message().find("AZ_BATCH_MASTER_NODE"), std::string::npos);
  }
}

}  // namespace
}  // namespace aml
