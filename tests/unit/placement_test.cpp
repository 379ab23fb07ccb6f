// Placement (--bind) on the fixture machines of tests/fixtures/machines/make_machines.py: the
// exact CPUs, memory nodes, threads and NIC of every rank in every mode, and what is left
// alone (a launcher given fewer CPUs, a task the scheduler bound).
#include "placement/placement.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "fixture_paths.hpp"

namespace aml {
namespace {

MachineLayout machine(const std::string& name) {
  auto layout = read_machine_layout(std::string(aml::test::test_machines()) + "/" + name);
  EXPECT_TRUE(layout) << (layout ? "" : layout.error().message());
  return layout ? *layout : MachineLayout{};
}

PlacementRequest request(BindMode mode, int ranks) {
  PlacementRequest r;
  r.mode = mode;
  r.local_world_size = ranks;
  r.local_ranks.resize(static_cast<std::size_t>(ranks));
  std::iota(r.local_ranks.begin(), r.local_ranks.end(), 0);
  return r;
}

// "CPUS mMEMS tTHREADS NIC" per rank: what the spawn applies and the workers are told.
std::vector<std::string> summary(const Placement& p) {
  std::vector<std::string> out;
  for (const RankPlacement& r : p.ranks) {
    std::string line = cpu_list_text(r.cpus);
    if (r.memory != MemoryPolicy::none) line += " m" + cpu_list_text(r.memory_nodes);
    if (r.threads > 0) line += " t" + std::to_string(r.threads);
    if (!r.nic.empty()) line += " " + r.nic;
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> placed(const std::string& name, BindMode mode, int ranks) {
  auto p = place_ranks(machine(name), request(mode, ranks));
  EXPECT_TRUE(p) << (p ? "" : p.error().message());
  return p ? summary(*p) : std::vector<std::string>{};
}

using Lines = std::vector<std::string>;

TEST(CpuList, ReadsAndWritesTheKernelsForm) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (CpuList{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), CpuList{});
  EXPECT_EQ(cpu_list_text({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(cpu_list_text({5}), "5");
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a"));
  EXPECT_FALSE(parse_cpu_list("1,,2"));
}

TEST(MachineLayout, ReadsSocketsCoresL3AndMemoryOnlyNodes) {
  const MachineLayout grace = machine("grace");
  EXPECT_EQ(grace.cpus.size(), 144u);
  EXPECT_EQ(grace.cpu(100)->socket, 1);
  EXPECT_EQ(grace.cpu_nodes(), (CpuList{0, 1}));  // nodes 2-5 hold GPU memory only
  EXPECT_EQ(grace.nodes.size(), 6u);
  ASSERT_EQ(grace.gpus.size(), 4u);
  EXPECT_EQ(grace.cpu_node_of(grace.gpus[1]), 0);  // names node 3, nearest CPU node 0
  EXPECT_EQ(grace.cpu_node_of(grace.gpus[2]), 1);  // says -1; its local CPUs are node 1's
  const MachineLayout single = machine("single-socket");
  EXPECT_EQ(single.cores_among({0, 16, 1, 17}), (std::vector<CpuList>{{0, 16}, {1, 17}}));
  EXPECT_EQ(single.cpu(20)->l3, 0);
  EXPECT_EQ(single.cpu(24)->l3, 8);
  const MachineLayout h100 = machine("nd-h100-v5");
  EXPECT_EQ(h100.gpus[7].uuid, "GPU-00000007-aaaa-bbbb-cccc-000000000007");
  EXPECT_EQ(h100.nics.size(), 9u);
}

TEST(MachineLayout, AMissingTreeIsAnErrorNamingTheFile) {
  auto layout = read_machine_layout("/nonexistent-machine");
  ASSERT_FALSE(layout);
  EXPECT_NE(layout.error().message().find("/nonexistent-machine/sys/devices/system/cpu/online"),
            std::string::npos);
}

TEST(Placement, NdH100v5EveryMode) {
  const Lines node = {"0-47 m0 t12 mlx5_ib0",  "0-47 m0 t12 mlx5_ib1",  "0-47 m0 t12 mlx5_ib2",
                      "0-47 m0 t12 mlx5_ib3",  "48-95 m1 t12 mlx5_ib4", "48-95 m1 t12 mlx5_ib5",
                      "48-95 m1 t12 mlx5_ib6", "48-95 m1 t12 mlx5_ib7"};
  EXPECT_EQ(placed("nd-h100-v5", BindMode::node, 8), node);
  EXPECT_EQ(placed("nd-h100-v5", BindMode::automatic, 8), node);
  EXPECT_EQ(placed("nd-h100-v5", BindMode::socket, 8), node);        // a NUMA node per socket
  EXPECT_EQ(placed("nd-h100-v5", BindMode::core_complex, 8), node);  // an L3 per socket
  EXPECT_EQ(placed("nd-h100-v5", BindMode::exclusive, 8),
            (Lines{"0-11 m0 t12 mlx5_ib0", "12-23 m0 t12 mlx5_ib1", "24-35 m0 t12 mlx5_ib2",
                   "36-47 m0 t12 mlx5_ib3", "48-59 m1 t12 mlx5_ib4", "60-71 m1 t12 mlx5_ib5",
                   "72-83 m1 t12 mlx5_ib6", "84-95 m1 t12 mlx5_ib7"}));
  // Nothing bound, the NIC still found; the front-end Ethernet NIC (mlx5_an0) never chosen.
  EXPECT_EQ(placed("nd-h100-v5", BindMode::none, 8),
            (Lines{" mlx5_ib0", " mlx5_ib1", " mlx5_ib2", " mlx5_ib3", " mlx5_ib4", " mlx5_ib5",
                   " mlx5_ib6", " mlx5_ib7"}));
}

TEST(Placement, NdA100v4EveryMode) {
  const Lines node = {"12-23 m1 t6 mlx5_0", "12-23 m1 t6 mlx5_1", "0-11 m0 t6 mlx5_2",
                      "0-11 m0 t6 mlx5_3",  "60-71 m5 t6 mlx5_4", "60-71 m5 t6 mlx5_5",
                      "48-59 m4 t6 mlx5_6", "48-59 m4 t6 mlx5_7"};
  EXPECT_EQ(placed("nd-a100-v4", BindMode::node, 8), node);
  EXPECT_EQ(placed("nd-a100-v4", BindMode::automatic, 8), node);
  EXPECT_EQ(placed("nd-a100-v4", BindMode::socket, 8),
            (Lines{"0-47 m0-3 t12 mlx5_0", "0-47 m0-3 t12 mlx5_1", "0-47 m0-3 t12 mlx5_2",
                   "0-47 m0-3 t12 mlx5_3", "48-95 m4-7 t12 mlx5_4", "48-95 m4-7 t12 mlx5_5",
                   "48-95 m4-7 t12 mlx5_6", "48-95 m4-7 t12 mlx5_7"}));
  EXPECT_EQ(placed("nd-a100-v4", BindMode::exclusive, 8),
            (Lines{"12-17 m1 t6 mlx5_0", "18-23 m1 t6 mlx5_1", "0-5 m0 t6 mlx5_2",
                   "6-11 m0 t6 mlx5_3", "60-65 m5 t6 mlx5_4", "66-71 m5 t6 mlx5_5",
                   "48-53 m4 t6 mlx5_6", "54-59 m4 t6 mlx5_7"}));
  EXPECT_EQ(placed("nd-a100-v4", BindMode::core_complex, 8),
            (Lines{"12-14 m1 t3 mlx5_0", "15-17 m1 t3 mlx5_1", "0-2 m0 t3 mlx5_2",
                   "3-5 m0 t3 mlx5_3", "60-62 m5 t3 mlx5_4", "63-65 m5 t3 mlx5_5",
                   "48-50 m4 t3 mlx5_6", "51-53 m4 t3 mlx5_7"}));
}

TEST(Placement, GraceNeverUsesMemoryOnlyNodesForCpus) {
  const Lines node = {"0-71 m0 t36 mlx5_0", "0-71 m0 t36 mlx5_1", "72-143 m1 t36 mlx5_2",
                      "72-143 m1 t36 mlx5_3"};
  EXPECT_EQ(placed("grace", BindMode::node, 4), node);
  EXPECT_EQ(placed("grace", BindMode::automatic, 4), node);
  EXPECT_EQ(placed("grace", BindMode::socket, 4), node);
  EXPECT_EQ(placed("grace", BindMode::core_complex, 4), node);  // one L3 per Grace
  EXPECT_EQ(placed("grace", BindMode::exclusive, 4),
            (Lines{"0-35 m0 t36 mlx5_0", "36-71 m0 t36 mlx5_1", "72-107 m1 t36 mlx5_2",
                   "108-143 m1 t36 mlx5_3"}));
}

TEST(Placement, SingleSocketKeepsHyperThreadsTogether) {
  EXPECT_EQ(placed("single-socket", BindMode::automatic, 2), (Lines{"", ""}));
  EXPECT_EQ(placed("single-socket", BindMode::node, 2), (Lines{"0-31 m0 t8", "0-31 m0 t8"}));
  EXPECT_EQ(placed("single-socket", BindMode::socket, 2), (Lines{"0-31 m0 t8", "0-31 m0 t8"}));
  const Lines halves = {"0-7,16-23 m0 t8", "8-15,24-31 m0 t8"};
  EXPECT_EQ(placed("single-socket", BindMode::exclusive, 2), halves);
  EXPECT_EQ(placed("single-socket", BindMode::core_complex, 2), halves);
  EXPECT_EQ(placed("single-socket", BindMode::exclusive, 3),
            (Lines{"0-4,16-20 m0 t5", "5-9,21-25 m0 t5", "10-15,26-31 m0 t6"}));
}

TEST(Placement, CpuOnlySpreadsRanksOverTheNodesInBlocks) {
  EXPECT_EQ(placed("cpu-only", BindMode::automatic, 4), (Lines{"", "", "", ""}));
  EXPECT_EQ(placed("cpu-only", BindMode::node, 4),
            (Lines{"0-7,16-23 m0 t4", "0-7,16-23 m0 t4", "8-15,24-31 m1 t4", "8-15,24-31 m1 t4"}));
  EXPECT_EQ(placed("cpu-only", BindMode::exclusive, 4),
            (Lines{"0-3,16-19 m0 t4", "4-7,20-23 m0 t4", "8-11,24-27 m1 t4", "12-15,28-31 m1 t4"}));
}

TEST(Placement, AutoSaysWhyItBindsNothing) {
  auto reason = [](const std::string& name, int ranks, std::optional<std::string> devices = {}) {
    PlacementRequest r = request(BindMode::automatic, ranks);
    r.cuda_visible_devices = devices;
    auto p = place_ranks(machine(name), r);
    EXPECT_TRUE(p);
    return p ? p->reason : "";
  };
  EXPECT_NE(reason("single-socket", 2).find("one NUMA node"), std::string::npos);
  EXPECT_NE(reason("cpu-only", 2).find("no NVIDIA GPU"), std::string::npos);
  EXPECT_NE(reason("nd-h100-v5", 9).find("local rank 8"), std::string::npos);
  EXPECT_NE(reason("nd-h100-v5", 2, "0,0").find("shares its GPU"), std::string::npos);
  MachineLayout shared = machine("nd-h100-v5");
  shared.allowed_cpus = {0, 1, 2, 3};
  auto p = place_ranks(shared, request(BindMode::automatic, 8));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->applied, BindMode::none);
  EXPECT_NE(p->reason.find("CPUs 0-3 of 0-95"), std::string::npos) << p->reason;
}

TEST(Placement, CudaVisibleDevicesByIndexAndUuid) {
  PlacementRequest r = request(BindMode::node, 3);
  r.cuda_visible_devices = "5,GPU-00000002,MIG-1234";
  auto p = place_ranks(machine("nd-h100-v5"), r);
  ASSERT_TRUE(p);
  // The rank without a GPU goes with the blocks of ranks over the nodes (2 of 3: node 1).
  EXPECT_EQ(summary(*p), (Lines{"48-95 m1 t24 mlx5_ib5", "0-47 m0 t48 mlx5_ib2", "48-95 m1 t24"}));
  EXPECT_EQ(p->ranks[1].gpu, "0003:00:00.0");
  EXPECT_NE(p->ranks[2].gpu_label.find("MIG instance"), std::string::npos);
}

TEST(Placement, NeverOutsideWhatTheLauncherWasGiven) {
  MachineLayout given = machine("nd-h100-v5");
  given.allowed_cpus = {2};  // taskset -c 2
  given.allowed_mems = {0};
  auto p = place_ranks(given, request(BindMode::node, 8));
  ASSERT_TRUE(p);
  for (const RankPlacement& rank : p->ranks) EXPECT_EQ(rank.cpus, CpuList{2});
  EXPECT_EQ(summary(*p)[0], "2 m0 t1 mlx5_ib0");
  EXPECT_EQ(summary(*p)[4], "2 t1 mlx5_ib4");  // node 1's memory is not given: no policy
  EXPECT_NE(p->ranks[4].why.find("none of those CPUs"), std::string::npos);
  auto exclusive = place_ranks(given, request(BindMode::exclusive, 8));
  ASSERT_FALSE(exclusive);
  EXPECT_NE(exclusive.error().message().find("local ranks 0, 1, 2, 3 belong to NUMA node 0, "
                                             "which has 1 core(s)"),
            std::string::npos)
      << exclusive.error().message();
}

TEST(Placement, ATaskTheSchedulerBoundIsLeftAlone) {
  MachineLayout bound = machine("nd-h100-v5");
  bound.allowed_cpus = {12, 13, 14, 15};  // srun --cpu-bind, mpirun --bind-to
  PlacementRequest r = request(BindMode::node, 8);
  r.per_process = true;
  r.local_ranks = {1};
  auto p = place_ranks(bound, r);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->applied, BindMode::none);
  ASSERT_EQ(p->ranks.size(), 1u);
  EXPECT_TRUE(p->ranks[0].cpus.empty());
  EXPECT_EQ(p->ranks[0].nic, "mlx5_ib1");
  EXPECT_NE(p->reason.find("already bound this task (CPUs 12-15 of 0-95)"), std::string::npos);
  // Slurm says so, its mask covering the whole node.
  r.scheduler_binding = "SLURM_CPU_BIND_TYPE=mask_cpu:";
  auto slurm = place_ranks(machine("nd-h100-v5"), r);
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->applied, BindMode::none);
  // An unbound task of a per-process launch is placed as its local rank.
  r.scheduler_binding.clear();
  r.local_ranks = {5};
  auto unbound_task = place_ranks(machine("nd-h100-v5"), r);
  ASSERT_TRUE(unbound_task);
  EXPECT_EQ(summary(*unbound_task), (Lines{"48-95 m1 t12 mlx5_ib5"}));
}

// srun --ntasks-per-node N --gpus-per-task K: each task's CUDA_VISIBLE_DEVICES is its own list
// (0 under Slurm's cgroup device constraint, else the real index), whatever its local rank.
TEST(Placement, ATasksOwnGpusAreItsGpuWhateverItsLocalRank) {
  auto task = [](const std::string& devices, int local, int ranks) {
    PlacementRequest r = request(BindMode::node, ranks);
    r.per_process = true;
    r.local_ranks = {local};
    r.cuda_visible_devices = devices;
    auto p = place_ranks(machine("nd-h100-v5"), r);
    EXPECT_TRUE(p) << (p ? "" : p.error().message());
    return p ? p->ranks.at(0) : RankPlacement{};
  };
  const MachineLayout h100 = machine("nd-h100-v5");
  const RankPlacement cgroup = task("0", 5, 8);  // the one GPU it can see is its device 0
  EXPECT_EQ(cgroup.gpu, h100.gpus[0].address) << cgroup.gpu_label;
  EXPECT_NE(cgroup.gpu_label.find("the task's own list of 1"), std::string::npos)
      << cgroup.gpu_label;
  const RankPlacement real = task("5", 5, 8);
  EXPECT_EQ(real.gpu, h100.gpus[5].address) << real.gpu_label;
  EXPECT_EQ(real.nic, "mlx5_ib5");
  const RankPlacement two = task("4,5", 2, 4);  // two GPUs a task: the first is its home
  EXPECT_EQ(two.gpu, h100.gpus[4].address) << two.gpu_label;
  // The node's whole list, one entry a local rank, is still read by local rank.
  const RankPlacement node_list = task("0,1,2,3,4,5,6,7", 6, 8);
  EXPECT_EQ(node_list.gpu, h100.gpus[6].address) << node_list.gpu_label;
  // auto cannot know the other tasks' GPUs: it binds nothing and says why.
  PlacementRequest automatic = request(BindMode::automatic, 8);
  automatic.per_process = true;
  automatic.local_ranks = {5};
  automatic.cuda_visible_devices = "5";
  auto decided = place_ranks(h100, automatic);
  ASSERT_TRUE(decided);
  EXPECT_EQ(decided->applied, BindMode::none);
  EXPECT_NE(decided->reason.find("each task has its own CUDA_VISIBLE_DEVICES"), std::string::npos)
      << decided->reason;
  EXPECT_EQ(decided->ranks.at(0).gpu, h100.gpus[5].address);
  // A launcher that spawns its workers (not per process) reads its list by local rank.
  PlacementRequest spawned = request(BindMode::node, 2);
  spawned.cuda_visible_devices.emplace("3");  // (gcc 12 warns of = "3" here: -Wrestrict)
  auto p = place_ranks(h100, spawned);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ranks[0].gpu, h100.gpus[3].address);
  EXPECT_TRUE(p->ranks[1].gpu.empty()) << p->ranks[1].gpu_label;
}

}  // namespace
}  // namespace aml
