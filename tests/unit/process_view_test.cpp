#include "rank/process_view.hpp"

#include <gtest/gtest.h>

namespace aml {
namespace {

TEST(ProcessView, PerProcessKeepsTheSchedulersRank) {
  Topology t;
  t.launch = Launch::per_process;
  t.rank = 5;
  t.local_rank = 1;
  t.nproc_per_node = 4;
  t.world_size = 8;
  t.node_rank = 1;
  ProcessTopology p = process_view(t);
  EXPECT_EQ(p.rank, 5);
  EXPECT_EQ(p.local_rank, 1);
  EXPECT_EQ(p.local_world_size, 4);
  EXPECT_EQ(p.world_size, 8);
  EXPECT_EQ(p.node_rank, 1);
  EXPECT_TRUE(p.in_training_world);
}

TEST(ProcessView, NodeLevelWithoutALauncherIsOneProcessPerNode) {
  Topology t;
  t.launch = Launch::per_node;
  t.nnodes = 3;
  t.node_rank = 2;
  t.nproc_per_node = 8;
  t.world_size = 24;
  ProcessTopology p = process_view(t);
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.local_rank, 0);
  EXPECT_EQ(p.local_world_size, 1);
  EXPECT_EQ(p.world_size, 3);
}

TEST(ProcessView, TensorFlowPsIsOutsideTheWorld) {
  Topology t;
  t.launch = Launch::per_process;
  t.rank = -1;
  EXPECT_FALSE(process_view(t).in_training_world);
}

}  // namespace
}  // namespace aml
