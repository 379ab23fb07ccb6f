// What nodes say about themselves at the rendezvous, the agreement check, and the failure
// record that crosses nodes.
#include "rendezvous/node_info.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "supervisor/job_failure.hpp"

namespace aml {
namespace {

NodeInfo node(int rank, int nproc = 2, std::string run_id = "run-1") {
  NodeInfo info;
  info.node_rank = rank;
  info.host = "host" + std::to_string(rank);
  info.addr = "10.0.0." + std::to_string(rank + 1);
  info.nnodes = 3;
  info.nproc_per_node = nproc;
  info.run_id = std::move(run_id);
  info.version = "0.1.0";
  info.tf_ports = {4000 + rank, 5000 + rank};
  return info;
}

TEST(NodeInfo, SurvivesJson) {
  NodeInfo original = node(2);
  original.pid = 4242;
  auto back = node_info_from_json(to_json(original));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->node_rank, 2);
  EXPECT_EQ(back->host, "host2");
  EXPECT_EQ(back->addr, "10.0.0.3");
  EXPECT_EQ(back->pid, 4242);
  EXPECT_EQ(back->nproc_per_node, 2);
  EXPECT_EQ(back->run_id, "run-1");
  EXPECT_EQ(back->tf_ports, (std::vector<int>{4002, 5002}));
}

TEST(NodeInfo, RejectsWhatIsNotADescription) {
  EXPECT_FALSE(node_info_from_json("not json"));
  EXPECT_FALSE(node_info_from_json("[1, 2]"));
  EXPECT_FALSE(node_info_from_json(R"({"node_rank": "zero"})"));
}

TEST(Disagreement, NoneWhenEveryNodeAgrees) {
  EXPECT_FALSE(disagreement({node(0), node(1), node(2)}));
}

TEST(Disagreement, NamesTheNodesAndWhatEachSays) {
  auto problem = disagreement({node(0), node(1), node(2, 4)});
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem,
            "the nodes disagree on processes per node: node 0 (host0) and node 1 (host1) have 2 "
            "and node 2 (host2) has 4");
}

TEST(Disagreement, ListsEveryPropertyThatDiffers) {
  NodeInfo odd = node(1, 2, "run-2");
  odd.version = "0.2.0";
  auto problem = disagreement({node(0), odd});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("the run id: node 0 (host0) has \"run-1\" and node 1 (host1) has "
                          "\"run-2\""),
            std::string::npos)
      << *problem;
  EXPECT_NE(problem->find("the aml-launch version"), std::string::npos) << *problem;
  EXPECT_EQ(problem->find("processes per node"), std::string::npos) << *problem;
}

TEST(MissingNodeRanks, ListsTheAbsentOnes) {
  EXPECT_EQ(missing_node_ranks(3, {0, 1}), "2");
  EXPECT_EQ(missing_node_ranks(5, {0, 3}), "1, 2 and 4");
  EXPECT_EQ(missing_node_ranks(2, {0, 1}), "");
}

TEST(JobFailure, AStopRecordCrossesNodesAsJson) {
  JobFailure stop;
  stop.node_rank = 1;
  stop.host = "h1";
  stop.stop_signal = SIGINT;
  stop.exit_code = 130;
  stop.status = "its launcher was stopped by SIGINT from outside";
  auto back = job_failure_from_json(to_json(stop));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->stop_signal, SIGINT);
  EXPECT_EQ(back->exit_code, 130);
  // A record of a launcher without stops (an earlier version) reads as a failure.
  auto old = nlohmann::json::parse(to_json(stop));
  old.erase("stop_signal");
  back = job_failure_from_json(old.dump());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->stop_signal, 0);
}

TEST(JobFailure, SurvivesJsonWithItsStderrTail) {
  JobFailure f;
  f.node_rank = 2;
  f.host = "c";
  f.rank = 5;
  f.local_rank = 1;
  f.pid = 77;
  f.exit_code = 7;
  f.status = "exit code 7";
  f.time = "2026-11-22T05:00:00.000Z";
  f.stderr_tail = {"Traceback", "ValueError: \xff bad byte"};
  auto back = job_failure_from_json(to_json(f));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->describe(),
            "rank 5 (local rank 1) on node 2 (c), pid 77, failed first at "
            "2026-11-22T05:00:00.000Z: exit code 7");
  EXPECT_EQ(back->exit_code, 7);
  ASSERT_EQ(back->stderr_tail.size(), 2u);
  EXPECT_EQ(back->stderr_tail[0], "Traceback");
}

TEST(JobFailure, ALostNodeIsNotARank) {
  JobFailure f;
  f.node_rank = 1;
  f.host = "b";
  f.status = "its launcher was lost: no heartbeat for 1.2 s";
  EXPECT_EQ(f.describe(), "node 1 (b): its launcher was lost: no heartbeat for 1.2 s");
  EXPECT_FALSE(job_failure_from_json("{}"));
}

TEST(NodeInfo, ANewcomerToARunningJobIsComparedButForTheNodeCount) {
  NodeInfo member = node(1);
  NodeInfo newcomer = node(5);
  newcomer.nnodes = 7;  // the round's count comes with its seat
  EXPECT_FALSE(newcomer_disagreement(member, newcomer));
  newcomer.nproc_per_node = 4;
  newcomer.max_restarts = 2;
  auto why = newcomer_disagreement(member, newcomer);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("processes per node"), std::string::npos) << *why;
  EXPECT_NE(why->find("--max-restarts"), std::string::npos) << *why;
  EXPECT_NE(why->find("a node waiting for its seat (host5) has 4"), std::string::npos) << *why;
  EXPECT_NE(why->find("node 1 (host1) has 2"), std::string::npos) << *why;
  EXPECT_EQ(why->find("number of nodes"), std::string::npos) << *why;
}

TEST(NodeInfo, ItsHealthAndMachineCrossTheWire) {
  NodeInfo sick = node(3);
  sick.health = "gpu: GPU 1: the driver's recovery action is reset the GPU (1)";
  sick.machine = "node-c";
  sick.nic_gbps = 200;
  auto back = node_info_from_json(to_json(sick));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->health, sick.health);
  EXPECT_EQ(back->machine, "node-c");
  EXPECT_EQ(back->nic_gbps, 200);
  auto healthy = node_info_from_json(to_json(node(1)));
  ASSERT_TRUE(healthy);
  EXPECT_EQ(healthy->health, "");
  EXPECT_EQ(to_json(node(1)).find("health"), std::string::npos);  // nothing said: healthy
}

TEST(SlowerPorts, NamesTheNodesBelowTheFastest) {
  std::vector<NodeInfo> nodes = {node(0), node(1), node(2)};
  for (NodeInfo& n : nodes) n.addr = "10.0.0." + std::to_string(n.node_rank + 1);
  EXPECT_EQ(slower_ports(nodes), "");  // no nic check ran
  for (NodeInfo& n : nodes) n.nic_gbps = 400;
  EXPECT_EQ(slower_ports(nodes), "");  // alike
  nodes[2].nic_gbps = 100;
  EXPECT_EQ(slower_ports(nodes),
            "node 2 (host2) at 10.0.0.3: 100 Gb/s (the others' slowest port: 400 Gb/s)");
}

}  // namespace
}  // namespace aml
