// Table-driven detection: every row of the table (detect_case_table.hpp) through
// detect_topology, and the cases a row cannot hold.
#include <gtest/gtest.h>

#include <cctype>
#include <optional>

#include "detect_case_table.hpp"
#include "topology/detect.hpp"

namespace aml::detect_cases {
namespace {

std::vector<Case> cases() {
  std::vector<Case> all = framework_cases();
  for (auto* family : {&hpc_scheduler_cases, &cloud_cases}) {
    auto rows = family();
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

class DetectCase : public ::testing::TestWithParam<Case> {};

TEST_P(DetectCase, GivesTheExpectedTopologyOrError) {
  const Case& c = GetParam();
  Machine machine{[&] { return c.gpus; }, [&](const std::string&) { return c.file; },
                  [] { return 8; }};
  auto result = detect_topology(c.env, machine, c.flags);
  if (!c.expect) {
    ASSERT_FALSE(result.ok()) << c.name << ": wanted an error naming " << c.error_variable;
    EXPECT_NE(result.error().message().find(c.error_variable), std::string::npos)
        << c.name << ": " << result.error().message();
    return;
  }
  ASSERT_TRUE(result.ok()) << c.name << ": " << result.error().message();
  const Topology& t = *result;
  const Expect& e = *c.expect;
  EXPECT_EQ(t.source, e.source) << c.name;
  EXPECT_EQ(t.launch, e.launch) << c.name;
  EXPECT_EQ(t.nnodes, e.nnodes) << c.name;
  EXPECT_EQ(t.node_rank, e.node_rank) << c.name;
  EXPECT_EQ(t.nproc_per_node, e.nproc_per_node) << c.name;
  EXPECT_EQ(t.world_size, e.world_size) << c.name;
  int rank = t.launch == Launch::per_process ? t.rank : t.node_rank * t.nproc_per_node;
  EXPECT_EQ(rank, e.rank) << c.name;
  EXPECT_EQ(t.master_addr, e.master_addr) << c.name;
  if (e.master_port != kAnyPort) {
    EXPECT_EQ(t.master_port, e.master_port) << c.name;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = std::to_string(info.index) + "_";
  for (char c : info.param.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Sources, DetectCase, ::testing::ValuesIn(cases()), case_name);

TEST(DetectCases, TableIsLargeEnough) { EXPECT_GE(cases().size(), 60u); }

TEST(Detect, LsfMasterIsTheFirstComputeHostOfTheRankfile) {
  Env env{{"JSM_NAMESPACE_RANK", "0"},
          {"JSM_NAMESPACE_SIZE", "4"},
          {"JSM_NAMESPACE_LOCAL_RANK", "0"},
          {"JSM_NAMESPACE_LOCAL_SIZE", "2"},
          {"LSB_DJOB_RANKFILE", "/rankfile"}};
  Machine machine{[] { return 0; },
                  [](const std::string& path) -> std::optional<std::string> {
                    if (path == "/rankfile") return std::string("batch1\nnode07\nnode07\nnode08\n");
                    return std::nullopt;
                  },
                  [] { return 1; }};
  auto t = detect_topology(env, machine);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->master_addr, "node07");
  env["LSB_DJOB_RANKFILE"] = "/missing";
  auto missing_file = detect_topology(env, machine);
  ASSERT_FALSE(missing_file.ok());
  EXPECT_NE(missing_file.error().message().find("LSB_DJOB_RANKFILE=/missing"), std::string::npos);
}

TEST(Detect, ErrorMessageNamesVariableValueAndExpectation) {
  Machine machine{[] { return 0; }, [](const std::string&) { return std::nullopt; },
                  [] { return 1; }};
  auto t = detect_topology({{"RANK", "8"}, {"WORLD_SIZE", "8"}}, machine);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message(), "RANK=8: expected a rank below WORLD_SIZE=8");
}

TEST(Detect, RunIdComesFromTheScheduler) {
  Machine machine{[] { return 0; }, [](const std::string&) { return std::nullopt; },
                  [] { return 1; }};
  auto t =
      detect_topology({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"AZUREML_RUN_ID", "run_42"}}, machine);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->run_id, "run_42");
}

}  // namespace
}  // namespace aml::detect_cases