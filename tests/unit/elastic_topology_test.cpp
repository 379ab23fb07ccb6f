// Elastic jobs as the environment and the flags describe them (DESIGN §5): a range of nodes,
// no node rank until a round's rendezvous, the store at the rendezvous endpoint.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plan/launch_plan.hpp"
#include "topology/detect.hpp"
#include "topology/numbers.hpp"

namespace aml {
namespace {

Machine eight_cpus() {
  return Machine{[] { return 0; }, [](const std::string&) { return std::nullopt; },
                 [] { return 8; }};
}

Result<Topology> detect(const Env& env, const Overrides& flags = {}) {
  return detect_topology(env, eight_cpus(), flags);
}

// What a Kubeflow PyTorchJob with an elasticPolicy gives every pod: no rank at all.
const Env kElasticPod = {{"PET_NNODES", "2:4"},
                         {"PET_RDZV_BACKEND", "c10d"},
                         {"PET_RDZV_ENDPOINT", "job-worker-0:23456"},
                         {"PET_RDZV_ID", "job"},
                         {"PET_MAX_RESTARTS", "3"},
                         {"PET_NPROC_PER_NODE", "2"}};

TEST(ElasticTopology, KubeflowElasticPolicyNeedsNoRank) {
  auto t = detect(kElasticPod);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->source, "kubeflow");
  ASSERT_TRUE(t->elastic.has_value());
  EXPECT_EQ(t->elastic->min, 2);
  EXPECT_EQ(t->elastic->max, 4);
  EXPECT_EQ(t->nnodes, 4);
  EXPECT_EQ(t->node_rank, -1);
  EXPECT_EQ(t->world_size, -1);
  EXPECT_EQ(t->nproc_per_node, 2);
  EXPECT_EQ(t->master_addr, "job-worker-0");
  EXPECT_EQ(t->master_port, 23456);
  EXPECT_EQ(t->run_id, "job");
}

TEST(ElasticTopology, EndpointWithoutPortTakesTorchrunsRendezvousPort) {
  Env env = kElasticPod;
  env["PET_RDZV_ENDPOINT"] = "job-worker-0";
  auto t = detect(env);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->master_port, 29400);
}

TEST(ElasticTopology, FixedRangeWithThePodsNodeRankIsAFixedJob) {
  auto t = detect({{"PET_NNODES", "2:2"}, {"PET_NODE_RANK", "1"}, {"PET_MASTER_ADDR", "m"}});
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_FALSE(t->elastic.has_value());
  EXPECT_EQ(t->node_rank, 1);
  EXPECT_EQ(t->nnodes, 2);
}

TEST(ElasticTopology, NodeRankOfTheEnvironmentIsNotUsedButSaid) {
  Env env = kElasticPod;
  env["PET_NODE_RANK"] = "1";
  auto t = detect(env);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->node_rank, -1);
  ASSERT_EQ(t->notes.size(), 1u);
  EXPECT_NE(t->notes[0].find("PET_NODE_RANK=1 is not used"), std::string::npos) << t->notes[0];
}

TEST(ElasticTopology, RangeFlagMakesAnyPerNodeSourceElastic) {
  Overrides flags;
  flags.nnodes_range = NodeRange{2, 2};
  auto t =
      detect({{"NODE_RANK", "1"}, {"MASTER_ADDR", "10.0.0.4"}, {"MASTER_PORT", "6000"}}, flags);
  ASSERT_TRUE(t.ok()) << t.error().message();
  ASSERT_TRUE(t->elastic.has_value());
  EXPECT_EQ(t->node_rank, -1);
  EXPECT_EQ(t->master_addr, "10.0.0.4");
  EXPECT_EQ(t->master_port, 6000);
}

TEST(ElasticTopology, FixedCountFlagReplacesTheRange) {
  Env env = kElasticPod;
  env["PET_NODE_RANK"] = "2";
  Overrides flags;
  flags.nnodes = 3;
  auto t = detect(env, flags);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_FALSE(t->elastic.has_value());
  EXPECT_EQ(t->nnodes, 3);
  EXPECT_EQ(t->node_rank, 2);
}

void expect_error(const Result<Topology>& t, const std::string& naming) {
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message().find(naming), std::string::npos) << t.error().message();
}

TEST(ElasticTopology, NodeRankFlagContradictsARange) {
  Overrides flags;
  flags.nnodes_range = NodeRange{2, 4};
  flags.node_rank = 1;
  expect_error(detect({{"MASTER_ADDR", "m"}, {"NODE_RANK", "0"}}, flags), "--node-rank");
}

TEST(ElasticTopology, PerProcessLaunchCannotBeElastic) {
  Overrides flags;
  flags.nnodes_range = NodeRange{1, 2};
  Env env = {{"OMPI_COMM_WORLD_RANK", "1"},
             {"OMPI_COMM_WORLD_SIZE", "4"},
             {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
             {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
             {"MASTER_ADDR", "m"}};
  expect_error(detect(env, flags), "--nnodes");
}

TEST(ElasticTopology, OneTaskPerNodeOfAProcessLevelSourceIsANodesLauncher) {
  // srun -N 3 aml-launch --nnodes 2:2: Slurm's one task per node, the store at the first node.
  Overrides flags;
  flags.nnodes_range = NodeRange{2, 2};
  auto t = detect({{"SLURM_JOB_ID", "77"},
                   {"SLURM_STEP_ID", "0"},
                   {"SLURM_PROCID", "1"},
                   {"SLURM_NTASKS", "3"},
                   {"SLURM_NNODES", "3"},
                   {"SLURM_LOCALID", "0"},
                   {"SLURM_NODEID", "1"},
                   {"SLURM_STEP_NODELIST", "n[0-2]"},
                   {"SLURM_STEP_TASKS_PER_NODE", "1(x3)"}},
                  flags);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->launch, Launch::per_node);
  ASSERT_TRUE(t->elastic.has_value());
  EXPECT_EQ(t->master_addr, "n0");
  EXPECT_EQ(t->nproc_per_node, 1);
  EXPECT_EQ(t->node_rank, -1);
}

TEST(ElasticTopology, RangeWithoutEndpointNamesWhereToGiveIt) {
  expect_error(detect({{"PET_NNODES", "2:4"}}), "--rdzv-endpoint");
}

TEST(ElasticTopology, NodeRangeText) {
  auto fixed = parse_node_range("--nnodes", "3");
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->min, 3);
  EXPECT_EQ(fixed->max, 3);
  for (const char* bad : {"0:2", "3:2", "a:b", "2:", ":2", "2:4:6", "-1:2", ""}) {
    auto range = parse_node_range("--nnodes", bad);
    ASSERT_FALSE(range.ok()) << bad;
    EXPECT_NE(range.error().message().find("--nnodes"), std::string::npos);
  }
}

TEST(ElasticPlan, DryRunSaysWhatTheRendezvousGives) {
  auto t = detect(kElasticPod);
  ASSERT_TRUE(t.ok()) << t.error().message();
  PlanInputs inputs;
  inputs.cpu_count = 8;
  inputs.max_restarts = 3;
  ElasticPlan elastic;
  elastic.serves_store = false;
  elastic.serves_reason = "job-worker-0 (10.0.0.9) is not an address of this host";
  elastic.last_call_seconds = 3;
  elastic.max_restarts = 3;
  inputs.elastic = elastic;
  LaunchPlan plan = build_plan(*t, inputs);
  auto json = nlohmann::json::parse(plan_json(plan));
  EXPECT_TRUE(json["nnodes"].is_null());
  EXPECT_TRUE(json["node_rank"].is_null());
  EXPECT_TRUE(json["world_size"].is_null());
  // The endpoint's port: node 0's store, where torch's door shares the socket.
  EXPECT_EQ(json["worker_master_port"], 23456);
  EXPECT_EQ(json["elastic"]["min_nodes"], 2);
  EXPECT_EQ(json["elastic"]["max_nodes"], 4);
  EXPECT_EQ(json["elastic"]["endpoint"], "job-worker-0:23456");
  EXPECT_EQ(json["elastic"]["serves_store"], false);
  EXPECT_EQ(json["elastic"]["admit_newcomers"], "next-round");
  ASSERT_EQ(json["workers"].size(), 2u);
  for (const auto& worker : json["workers"]) {
    EXPECT_TRUE(worker["rank"].is_null());
    EXPECT_FALSE(worker["env"].contains("RANK"));
    EXPECT_EQ(worker["env"]["TORCHELASTIC_MAX_RESTARTS"], "3");
  }
  const std::string text = plan_text(plan);
  EXPECT_NE(text.find("2 to 4, elastic"), std::string::npos) << text;
  EXPECT_NE(text.find("another node serves it"), std::string::npos) << text;
  EXPECT_NE(text.find("hot spares"), std::string::npos) << text;
}

}  // namespace
}  // namespace aml
