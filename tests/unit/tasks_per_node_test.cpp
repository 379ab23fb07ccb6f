#include "topology/tasks_per_node.hpp"

#include <gtest/gtest.h>

#include "topology/numbers.hpp"

namespace aml {
namespace {

TEST(TasksPerNode, Repeats) {
  auto counts = expand_tasks_per_node("SLURM_STEP_TASKS_PER_NODE", "4(x2),3");
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::vector<int>{4, 4, 3}));
}

TEST(TasksPerNode, Single) {
  auto counts = expand_tasks_per_node("SLURM_STEP_TASKS_PER_NODE", "8");
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::vector<int>{8}));
}

TEST(TasksPerNode, Malformed) {
  for (const char* text :
       {"", "4(x)", "4(x2", "(x2)", "4,,2", "0", "4(x0)", "a", "4(y2)", "4(x99999999)"}) {
    EXPECT_FALSE(expand_tasks_per_node("SLURM_STEP_TASKS_PER_NODE", text).ok()) << text;
  }
}

TEST(Numbers, Bounds) {
  EXPECT_EQ(*parse_number("N", "0", 0, 5), 0);
  EXPECT_EQ(*parse_number("N", "5", 0, 5), 5);
  EXPECT_FALSE(parse_number("N", "6", 0, 5).ok());
  EXPECT_FALSE(parse_number("N", "99999999999", 0, kMaxCount).ok());
  EXPECT_FALSE(parse_number("N", "+1", 0, 5).ok());
  EXPECT_EQ(parse_number("N", "7", 0, 5).error().message(),
            "N=7: expected a whole number from 0 to 5");
}

TEST(Numbers, Ports) {
  EXPECT_EQ(*parse_port("MASTER_PORT", "65535"), 65535);
  EXPECT_FALSE(parse_port("MASTER_PORT", "0").ok());
  EXPECT_EQ(parse_port("MASTER_PORT", "70000").error().message(),
            "MASTER_PORT=70000: expected a TCP port from 1 to 65535");
}

}  // namespace
}  // namespace aml
