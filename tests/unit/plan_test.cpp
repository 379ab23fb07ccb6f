#include <gtest/gtest.h>

#include <algorithm>

#include "plan/launch_plan.hpp"

namespace aml {
namespace {

const std::string* lookup(const EnvList& env, const std::string& name) {
  auto it = std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
  return it == env.end() ? nullptr : &it->second;
}

Topology per_node(int nnodes, int node_rank, int nproc) {
  Topology t;
  t.source = "standalone";
  t.launch = Launch::per_node;
  t.nnodes = nnodes;
  t.node_rank = node_rank;
  t.nproc_per_node = nproc;
  t.world_size = nnodes * nproc;
  t.master_addr = "10.0.0.4";
  t.master_port = 6105;
  return t;
}

// The plan of a launcher given nothing but the topology. A named value, not a `{}` temporary:
// gcc 12 at -O3 warns falsely that the temporary's strings may be used uninitialized.
LaunchPlan plan_of(const Topology& t) {
  const PlanInputs nothing_given;
  return build_plan(t, nothing_given);
}

TEST(BuildPlan, OneWorkerPerLocalRankWithGlobalRanks) {
  PlanInputs inputs;
  inputs.run_id = "run-7";
  inputs.cpu_count = 8;
  inputs.worker_master_port = 41000;  // what node 0 picked at the rendezvous
  LaunchPlan plan = build_plan(per_node(2, 1, 4), inputs);
  ASSERT_EQ(plan.workers.size(), 4u);
  for (int local = 0; local < 4; ++local) {
    const WorkerPlan& w = plan.workers[local];
    EXPECT_EQ(w.rank, 4 + local);
    EXPECT_EQ(*lookup(w.env, "RANK"), std::to_string(4 + local));
    EXPECT_EQ(*lookup(w.env, "LOCAL_RANK"), std::to_string(local));
    EXPECT_EQ(*lookup(w.env, "WORLD_SIZE"), "8");
    EXPECT_EQ(*lookup(w.env, "LOCAL_WORLD_SIZE"), "4");
    EXPECT_EQ(*lookup(w.env, "NODE_RANK"), "1");
    EXPECT_EQ(*lookup(w.env, "GROUP_RANK"), "1");
    EXPECT_EQ(*lookup(w.env, "GROUP_WORLD_SIZE"), "2");
    EXPECT_EQ(*lookup(w.env, "ROLE_RANK"), std::to_string(4 + local));
    EXPECT_EQ(*lookup(w.env, "ROLE_WORLD_SIZE"), "8");
    EXPECT_EQ(*lookup(w.env, "MASTER_ADDR"), "10.0.0.4");
    EXPECT_EQ(*lookup(w.env, "MASTER_PORT"), "41000");  // not 6105: that one is the store's
    EXPECT_EQ(*lookup(w.env, "AML_LAUNCH_WORKER"), "1");
    EXPECT_EQ(*lookup(w.env, "TORCHELASTIC_RESTART_COUNT"), "0");
    EXPECT_EQ(*lookup(w.env, "AML_LAUNCH_RUN_ID"), "run-7");
    EXPECT_EQ(*lookup(w.env, "TORCHELASTIC_RUN_ID"), "run-7");  // as torchrun sets it
    EXPECT_EQ(*lookup(w.env, "OMP_NUM_THREADS"), "2");          // 8 CPUs over 4 local workers
  }
}

TEST(BuildPlan, EveryNodesWorkersMeetAtNode0sAddressAndTheJobsPort) {
  // The launchers' store and torch's door share the job's port: known before any rendezvous.
  LaunchPlan plan = plan_of(per_node(2, 1, 2));
  EXPECT_EQ(plan.topology.master_port, 6105);
  EXPECT_EQ(plan.worker_master_port, 6105);
  for (const WorkerPlan& w : plan.workers) {
    EXPECT_EQ(*lookup(w.env, "MASTER_ADDR"), "10.0.0.4");
    EXPECT_EQ(*lookup(w.env, "MASTER_PORT"), "6105");
    EXPECT_FALSE(lookup(w.env, "AML_LAUNCH_NODE0_ADDR"));
  }
  EXPECT_NE(plan_json(plan).find("\"worker_master_port\": 6105"), std::string::npos);
}

TEST(BuildPlan, TheWorkersPortIsGivenAtTheRendezvousWhereNoStoreHasTheJobsPort) {
  PlanInputs torch_hosts;  // --worker-store torch: node 0 picks rank 0's worker a port
  torch_hosts.worker_store.by_launcher = false;
  PlanInputs relayed;  // --worker-store relay on node 1: its relay's port, picked each round
  relayed.worker_store.relay = true;
  relayed.worker_master_addr = "127.0.0.1";
  PlanInputs etcd;  // each round's node 0 serves the store at a port of its own
  etcd.rendezvous = RendezvousPlan{};
  etcd.rendezvous->backend = "etcd";
  for (const PlanInputs& inputs : {torch_hosts, relayed, etcd}) {
    LaunchPlan plan = build_plan(per_node(2, 1, 2), inputs);
    EXPECT_EQ(plan.worker_master_port, 0);
    EXPECT_FALSE(lookup(plan.workers[0].env, "MASTER_PORT"));
    EXPECT_NE(plan_json(plan).find("\"worker_master_port\": null"), std::string::npos);
  }
  LaunchPlan relay = build_plan(per_node(2, 1, 2), relayed);
  EXPECT_EQ(*lookup(relay.workers[0].env, "MASTER_ADDR"), "127.0.0.1");
  EXPECT_EQ(*lookup(relay.workers[0].env, "AML_LAUNCH_NODE0_ADDR"), "10.0.0.4");
}

TEST(BuildPlan, StoreAddressAndTokenOnlyWhenThereIsAStore) {
  PlanInputs inputs;
  EXPECT_FALSE(lookup(build_plan(per_node(1, 0, 1), inputs).workers[0].env, "AML_LAUNCH_STORE"));
  inputs.worker_master_port = 41000;
  inputs.store_address = "10.0.0.4:6105";
  inputs.store_token = "run-7";
  LaunchPlan plan = build_plan(per_node(2, 0, 1), inputs);
  EXPECT_EQ(*lookup(plan.workers[0].env, "AML_LAUNCH_STORE"), "10.0.0.4:6105");
  EXPECT_EQ(*lookup(plan.workers[0].env, "AML_LAUNCH_STORE_TOKEN"), "run-7");
}

TEST(BuildPlan, OmpThreadsAtLeastOneAndNotOverridden) {
  PlanInputs inputs;
  inputs.cpu_count = 2;
  EXPECT_EQ(*lookup(build_plan(per_node(1, 0, 8), inputs).workers[0].env, "OMP_NUM_THREADS"), "1");
  inputs.omp_threads_set = true;
  EXPECT_EQ(lookup(build_plan(per_node(1, 0, 8), inputs).workers[0].env, "OMP_NUM_THREADS"),
            nullptr);
}

TEST(BuildPlan, SocketInterfaceOnlyForMultiNodeAndOnlyWhenUnset) {
  PlanInputs inputs;
  inputs.route_ifname = "eth1";
  inputs.route_reason = "route";
  LaunchPlan multi = build_plan(per_node(2, 0, 1), inputs);
  EXPECT_EQ(multi.socket_ifname, "eth1");
  EXPECT_EQ(*lookup(multi.workers[0].env, "NCCL_SOCKET_IFNAME"), "eth1");
  EXPECT_EQ(*lookup(multi.workers[0].env, "GLOO_SOCKET_IFNAME"), "eth1");
  EXPECT_EQ(build_plan(per_node(1, 0, 1), inputs).socket_ifname, "");
  inputs.nccl_ifname_set = true;
  LaunchPlan kept = build_plan(per_node(2, 0, 1), inputs);
  EXPECT_EQ(lookup(kept.workers[0].env, "NCCL_SOCKET_IFNAME"), nullptr);
  EXPECT_EQ(*lookup(kept.workers[0].env, "GLOO_SOCKET_IFNAME"), "eth1");
}

TEST(BuildPlan, FreePortWhenTheJobNamesNone) {
  Topology t = per_node(1, 0, 2);
  t.master_port = 0;
  PlanInputs inputs;
  inputs.free_port = 41234;
  LaunchPlan plan = build_plan(t, inputs);
  EXPECT_EQ(plan.topology.master_port, 41234);
  EXPECT_EQ(*lookup(plan.workers[1].env, "MASTER_PORT"), "41234");
}

TEST(BuildPlan, PerProcessRunsTheOneRank) {
  Topology t = per_node(2, 1, 4);
  t.launch = Launch::per_process;
  t.rank = 5;
  t.local_rank = 1;
  LaunchPlan plan = plan_of(t);
  ASSERT_EQ(plan.workers.size(), 1u);
  EXPECT_EQ(plan.workers[0].rank, 5);
  EXPECT_EQ(*lookup(plan.workers[0].env, "LOCAL_RANK"), "1");
}

TEST(BuildPlan, TensorFlowPsTaskGetsNoRank) {
  Topology t = per_node(1, 0, 1);
  t.launch = Launch::per_process;
  t.rank = -1;
  t.role = "ps";
  LaunchPlan plan = plan_of(t);
  ASSERT_EQ(plan.workers.size(), 1u);
  EXPECT_EQ(lookup(plan.workers[0].env, "RANK"), nullptr);
  EXPECT_EQ(*lookup(plan.workers[0].env, "ROLE_NAME"), "ps");
}

TEST(PlanJson, HasTheContractFields) {
  std::string json = plan_json(plan_of(per_node(2, 1, 2)));
  for (const char* field :
       {"\"source\"", "\"launch\": \"per-node\"", "\"nnodes\": 2", "\"node_rank\": 1",
        "\"nproc_per_node\": 2", "\"world_size\": 4", "\"master_addr\": \"10.0.0.4\"",
        "\"master_port\": 6105", "\"workers\"", "\"rank\": 2", "\"rank\": 3"}) {
    EXPECT_NE(json.find(field), std::string::npos) << field << " missing in " << json;
  }
}

TEST(BuildPlan, MultiNodeTensorFlowSaysTheRendezvousWritesTfConfig) {
  PlanInputs inputs;
  inputs.tf_ports = {41001, 41002};
  LaunchPlan plan = build_plan(per_node(2, 1, 2), inputs);
  EXPECT_FALSE(lookup(plan.workers[0].env, "TF_CONFIG"));  // not known before the rendezvous
  ASSERT_FALSE(plan.topology.notes.empty());
  EXPECT_NE(plan.topology.notes.back().find("TF_CONFIG is written at the rendezvous"),
            std::string::npos);
  EXPECT_NE(plan.topology.notes.back().find("41001, 41002"), std::string::npos);
  EXPECT_NE(plan_json(plan).find("TF_CONFIG is written at the rendezvous"), std::string::npos);
  EXPECT_NE(plan_text(plan).find("note:            TF_CONFIG is written at the rendezvous"),
            std::string::npos);

  inputs.tf_workers = {"a:41001", "a:41002", "b:41001", "b:41002"};  // after the rendezvous
  plan = build_plan(per_node(2, 1, 2), inputs);
  EXPECT_NE(lookup(plan.workers[0].env, "TF_CONFIG")->find("\"b:41002\""), std::string::npos);
  EXPECT_TRUE(plan.topology.notes.empty());
}

// --virtual-local-rank narrows the node's list to a worker's own GPU, never a task's own list.
TEST(BuildPlan, VirtualLocalRankNarrowsTheNodesGpusNotATasksOwn) {
  PlanInputs inputs;
  inputs.cpu_count = 8;
  inputs.virtual_local_rank = true;
  inputs.visible_devices = {"0", "1", "2", "3"};
  LaunchPlan spawned = build_plan(per_node(1, 0, 4), inputs);
  ASSERT_EQ(spawned.workers.size(), 4u);
  EXPECT_EQ(*lookup(spawned.workers[2].env, "CUDA_VISIBLE_DEVICES"), "2");
  EXPECT_EQ(*lookup(spawned.workers[2].env, "LOCAL_RANK"), "0");
  Topology task = per_node(1, 0, 8);  // srun --ntasks-per-node 8 --gpus-per-task 1, task 5
  task.launch = Launch::per_process;
  task.rank = task.local_rank = 5;
  inputs.visible_devices = {"5"};
  LaunchPlan own = build_plan(task, inputs);
  ASSERT_EQ(own.workers.size(), 1u);
  EXPECT_EQ(lookup(own.workers[0].env, "CUDA_VISIBLE_DEVICES"), nullptr)
      << "the task keeps the GPU its scheduler gave it";
  EXPECT_EQ(*lookup(own.workers[0].env, "LOCAL_RANK"), "0");
}

}  // namespace
}  // namespace aml
