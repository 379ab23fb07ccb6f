#include "topology/hostlist.hpp"

#include <gtest/gtest.h>

namespace aml {
namespace {

using Hosts = std::vector<std::string>;

Hosts expand(std::string_view text) {
  auto hosts = expand_hostlist("SLURM_STEP_NODELIST", text);
  EXPECT_TRUE(hosts.ok()) << text << ": " << (hosts.ok() ? "" : hosts.error().message());
  return hosts.ok() ? *hosts : Hosts{};
}

std::string error_of(std::string_view text, std::size_t max_hosts = kMaxHostlistHosts) {
  auto hosts = expand_hostlist("SLURM_STEP_NODELIST", text, max_hosts);
  EXPECT_FALSE(hosts.ok()) << text << " should not parse";
  return hosts.ok() ? "" : hosts.error().message();
}

TEST(Hostlist, PlainNames) { EXPECT_EQ(expand("a,b,c"), (Hosts{"a", "b", "c"})); }
TEST(Hostlist, SingleName) { EXPECT_EQ(expand("login1"), (Hosts{"login1"})); }

TEST(Hostlist, RangeKeepsZeroPadding) {
  EXPECT_EQ(expand("gpu[007-010]"), (Hosts{"gpu007", "gpu008", "gpu009", "gpu010"}));
}

TEST(Hostlist, RangeWithoutPaddingGrowsDigits) {
  EXPECT_EQ(expand("n[8-10]"), (Hosts{"n8", "n9", "n10"}));
}

TEST(Hostlist, RangesAndListsInOneBracket) {
  EXPECT_EQ(expand("a[01-03,7]"), (Hosts{"a01", "a02", "a03", "a7"}));
}

TEST(Hostlist, SeveralBracketGroupsMultiplyLeftOutermost) {
  EXPECT_EQ(expand("rack[2-3]_blade[08-09]"),
            (Hosts{"rack2_blade08", "rack2_blade09", "rack3_blade08", "rack3_blade09"}));
}

TEST(Hostlist, EntriesWithAndWithoutBrackets) {
  EXPECT_EQ(expand("login1,gpu[1-2],x[3]y"), (Hosts{"login1", "gpu1", "gpu2", "x3y"}));
}

TEST(Hostlist, SuffixAfterBracket) { EXPECT_EQ(expand("n[1-2]-ib"), (Hosts{"n1-ib", "n2-ib"})); }

TEST(Hostlist, ReversedRangeIsAnError) {
  std::string message = error_of("gpu[3-1]");
  EXPECT_NE(message.find("SLURM_STEP_NODELIST=gpu[3-1]"), std::string::npos) << message;
  EXPECT_NE(message.find("backwards"), std::string::npos) << message;
}

TEST(Hostlist, MalformedListsAreErrors) {
  for (const char* text : {"", "a,,b", "gpu[1-2", "gpu1-2]", "gpu[]", "gpu[a-b]", "gpu[1-]",
                           "gpu[[1]]", "gpu[1,]", "a b", "gpu[-1]", "x[1-2],"}) {
    error_of(text);
  }
}

TEST(Hostlist, TooManyHostsIsAnErrorNotAnAllocation) {
  EXPECT_NE(error_of("n[0-999999999]").find("more than"), std::string::npos);
  EXPECT_NE(error_of("a[1-100]b[1-100]", 1000).find("more than"), std::string::npos);
}

}  // namespace
}  // namespace aml
