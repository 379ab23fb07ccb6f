// Table-driven detection: one environment per row, the topology (or the error) it must give.
#include <gtest/gtest.h>

#include <optional>

#include "topology/detect.hpp"

namespace aml {
namespace {

constexpr Launch PP = Launch::per_process;
constexpr Launch PN = Launch::per_node;
constexpr int kAnyPort = -1;

struct Expect {
  std::string source;
  Launch launch;
  int nnodes, node_rank, nproc_per_node, world_size;
  int rank;  // per-process: this process's rank; per-node: the first worker's rank
  std::string master_addr;
  int master_port;
};

struct Case {
  std::string name;
  Env env;
  Overrides flags = {};
  std::optional<Expect> expect = std::nullopt;
  std::string error_variable = {};                 // the variable the error must name
  int gpus = 0;                                    // /dev/nvidia* devices on the fake machine
  std::optional<std::string> file = std::nullopt;  // what the fake machine's files hold
};

Case ok(std::string name, Env env, Expect expect, Overrides flags = {}, int gpus = 0) {
  return Case{std::move(name), std::move(env), flags, std::move(expect), {}, gpus};
}
Case bad(std::string name, Env env, std::string variable, Overrides flags = {}) {
  return Case{std::move(name), std::move(env), flags, std::nullopt, std::move(variable)};
}
Overrides nproc(int n) { return Overrides{.nproc_per_node = n}; }

const std::string kTf2 =
    R"({"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"]}, "task": {"type": "worker", "index": 1}})";

Env ompi(int rank, int size, int local_rank, int local_size) {
  return {{"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
          {"OMPI_COMM_WORLD_SIZE", std::to_string(size)},
          {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(local_rank)},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(local_size)}};
}
// A worker that aml-launch started, rank `rank` of `local_size` on one node.
Env aml_worker(int rank, int local_size) {
  return {{"AML_LAUNCH_WORKER", "1"},
          {"RANK", std::to_string(rank)},
          {"LOCAL_RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(local_size)},
          {"LOCAL_WORLD_SIZE", std::to_string(local_size)},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", "41000"}};
}
Env with(Env env, Env more) {
  for (auto& [k, v] : more) env[k] = v;
  return env;
}
Env slurm(std::string procid, std::string ntasks, std::string localid, std::string nodeid,
          std::string tasks_per_node, std::string nodelist) {
  return {{"SLURM_JOB_ID", "123456"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_PROCID", procid},
          {"SLURM_NTASKS", ntasks},
          {"SLURM_LOCALID", localid},
          {"SLURM_NODEID", nodeid},
          {"SLURM_STEP_TASKS_PER_NODE", tasks_per_node},
          {"SLURM_STEP_NODELIST", nodelist}};
}

std::vector<Case> cases() {
  return {
      // --- standalone ---
      ok("nothing set: one node, one worker", {},
         {"standalone", PN, 1, 0, 1, 1, 0, "127.0.0.1", 0}),
      ok("standalone with four GPUs", {}, {"standalone", PN, 1, 0, 4, 4, 0, "127.0.0.1", 0}, {}, 4),
      ok("CUDA_VISIBLE_DEVICES list wins over /dev", {{"CUDA_VISIBLE_DEVICES", "0,1"}},
         {"standalone", PN, 1, 0, 2, 2, 0, "127.0.0.1", 0}, {}, 8),
      ok("NVIDIA_VISIBLE_DEVICES=all counts /dev", {{"NVIDIA_VISIBLE_DEVICES", "all"}},
         {"standalone", PN, 1, 0, 3, 3, 0, "127.0.0.1", 0}, {}, 3),
      ok("CUDA_VISIBLE_DEVICES empty hides every GPU", {{"CUDA_VISIBLE_DEVICES", ""}},
         {"standalone", PN, 1, 0, 1, 1, 0, "127.0.0.1", 0}, {}, 8),
      ok("standalone, --nproc-per-node 4", {}, {"standalone", PN, 1, 0, 4, 4, 0, "127.0.0.1", 0},
         nproc(4)),
      ok("standalone made multi-node by flags", {},
         {"standalone", PN, 2, 1, 2, 4, 2, "10.1.1.1", 7000},
         {.nnodes = 2,
          .node_rank = 1,
          .nproc_per_node = 2,
          .master_addr = "10.1.1.1",
          .master_port = 7000}),
      bad("standalone multi-node without a master", {}, "MASTER_ADDR",
          {.nnodes = 2, .node_rank = 1}),
      bad("--node-rank not below --nnodes", {}, "--node-rank",
          {.nnodes = 2, .node_rank = 2, .master_addr = "h"}),
      ok("a Slurm batch script outside a step is not rank 0 of N",
         {{"SLURM_JOB_ID", "5"},
          {"SLURM_PROCID", "0"},
          {"SLURM_NTASKS", "8"},
          {"SLURM_NODEID", "0"}},
         {"standalone", PN, 1, 0, 1, 1, 0, "127.0.0.1", 0}),
      bad("a multi-node Slurm batch script outside a step is told to use srun",
          {{"SLURM_JOB_ID", "5"}, {"SLURM_NNODES", "2"}, {"SLURM_PROCID", "0"}}, "SLURM_STEP_ID"),
      bad("salloc's shell of a multi-node allocation (the batch step id) is told so too",
          {{"SLURM_JOB_ID", "5"}, {"SLURM_NNODES", "4"}, {"SLURM_STEP_ID", "4294967291"}},
          "SLURM_STEP_ID"),
      ok("a multi-node Slurm allocation outside a step runs here with --nnodes given",
         {{"SLURM_JOB_ID", "5"}, {"SLURM_NNODES", "2"}},
         {"standalone", PN, 1, 0, 1, 1, 0, "127.0.0.1", 0}, {.nnodes = 1}),
      ok("a one-node Slurm batch script outside a step runs here",
         {{"SLURM_JOB_ID", "5"}, {"SLURM_NNODES", "1"}},
         {"standalone", PN, 1, 0, 1, 1, 0, "127.0.0.1", 0}),
      ok("the Slurm batch step id is not a step",
         with(slurm("0", "8", "0", "0", "4(x2)", "gpu[1-2]"), {{"SLURM_STEP_ID", "4294967291"}}),
         {"standalone", PN, 1, 0, 1, 1, 0, "127.0.0.1", 0}),

      // --- torchrun ---
      ok("inside torchrun: its variables win over leaked Open MPI ones",
         with(ompi(1, 2, 0, 1), {{"TORCHELASTIC_RUN_ID", "abc"},
                                 {"RANK", "3"},
                                 {"LOCAL_RANK", "1"},
                                 {"WORLD_SIZE", "4"},
                                 {"LOCAL_WORLD_SIZE", "2"},
                                 {"GROUP_RANK", "1"},
                                 {"MASTER_ADDR", "node0"},
                                 {"MASTER_PORT", "29500"}}),
         {"torchrun", PP, 2, 1, 2, 4, 3, "node0", 29500}),
      ok("torchrun wins over Kubeflow PET_*",
         {{"TORCHELASTIC_RUN_ID", "x"},
          {"PET_NNODES", "2"},
          {"RANK", "0"},
          {"LOCAL_RANK", "0"},
          {"WORLD_SIZE", "2"},
          {"LOCAL_WORLD_SIZE", "1"},
          {"MASTER_ADDR", "m"},
          {"MASTER_PORT", "1234"}},
         {"torchrun", PP, 2, 0, 1, 2, 0, "m", 1234}),
      bad("torchrun without LOCAL_WORLD_SIZE",
          {{"TORCHELASTIC_RUN_ID", "x"}, {"RANK", "0"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "2"}},
          "LOCAL_WORLD_SIZE"),
      bad("torchrun with GROUP_RANK past the nodes",
          {{"TORCHELASTIC_RUN_ID", "x"},
           {"RANK", "0"},
           {"LOCAL_RANK", "0"},
           {"WORLD_SIZE", "2"},
           {"LOCAL_WORLD_SIZE", "1"},
           {"GROUP_RANK", "2"},
           {"MASTER_ADDR", "m"}},
          "GROUP_RANK"),

      // --- aml-launch's own workers ---
      ok("a worker of aml-launch reads back what it was given",
         with(ompi(0, 2, 0, 1), {{"AML_LAUNCH_WORKER", "1"},
                                 {"RANK", "5"},
                                 {"LOCAL_RANK", "1"},
                                 {"WORLD_SIZE", "8"},
                                 {"LOCAL_WORLD_SIZE", "4"},
                                 {"NODE_RANK", "1"},
                                 {"GROUP_WORLD_SIZE", "2"},
                                 {"MASTER_ADDR", "10.0.0.4"},
                                 {"MASTER_PORT", "6105"}}),
         {"aml-launch", PP, 2, 1, 4, 8, 5, "10.0.0.4", 6105}),
      ok("a worker of aml-launch with its TORCHELASTIC_RUN_ID is still aml-launch's",
         {{"AML_LAUNCH_WORKER", "1"},
          {"AML_LAUNCH_RUN_ID", "run-7"},
          {"TORCHELASTIC_RUN_ID", "run-7"},
          {"RANK", "1"},
          {"LOCAL_RANK", "1"},
          {"WORLD_SIZE", "2"},
          {"LOCAL_WORLD_SIZE", "2"},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", "41000"}},
         {"aml-launch", PP, 1, 0, 2, 2, 1, "127.0.0.1", 41000}),
      ok("torchrun started inside an aml-launch worker: torchrun's run id wins",
         {{"AML_LAUNCH_WORKER", "1"},
          {"AML_LAUNCH_RUN_ID", "run-7"},
          {"TORCHELASTIC_RUN_ID", "torchrun-run"},
          {"RANK", "3"},
          {"LOCAL_RANK", "3"},
          {"WORLD_SIZE", "4"},
          {"LOCAL_WORLD_SIZE", "4"},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", "29500"}},
         {"torchrun", PP, 1, 0, 4, 4, 3, "127.0.0.1", 29500}),
      bad("a launcher inside a launcher refuses workers of its own (one a node outside)",
          aml_worker(0, 1), "--nproc-per-node", nproc(2)),
      bad("a launcher inside a launcher refuses an elastic --nnodes of its own", aml_worker(0, 1),
          "--nnodes", {.nnodes_range = NodeRange{1, 2}}),
      bad("a launcher inside a launcher refuses the same count as the outer one's",
          aml_worker(1, 2), "--nproc-per-node", nproc(2)),
      ok("an aml-launch TF ps task has no rank",
         {{"AML_LAUNCH_WORKER", "1"},
          {"ROLE_NAME", "ps"},
          {"MASTER_ADDR", "h"},
          {"MASTER_PORT", "2222"}},
         {"aml-launch", PP, 1, 0, 1, 1, -1, "h", 2222}),

      // --- TF_CONFIG ---
      ok("TF_CONFIG with a chief: worker 1 is rank 2", {{"TF_CONFIG", kTf2}},
         {"tf-config", PP, 3, 2, 1, 3, 2, "host0", 2222}),
      ok("TF_CONFIG chief is rank 0",
         {{"TF_CONFIG",
           R"({"cluster": {"chief": ["c:1"], "worker": ["w:2"]}, "task": {"type": "chief", "index": 0}})"}},
         {"tf-config", PP, 2, 0, 1, 2, 0, "c", 1}),
      ok("TF_CONFIG workers only: worker 0 leads",
         {{"TF_CONFIG",
           R"({"cluster": {"worker": ["10.0.0.4:2222", "10.0.0.5:2222"]}, "task": {"type": "worker", "index": 0}, "environment": "cloud"})"}},
         {"tf-config", PP, 2, 0, 1, 2, 0, "10.0.0.4", 2222}),
      ok("TF_CONFIG legacy master counts as chief",
         {{"TF_CONFIG",
           R"({"cluster": {"master": ["m:5"], "worker": ["w:6", "w2:6"]}, "task": {"type": "worker", "index": 0}})"}},
         {"tf-config", PP, 3, 1, 1, 3, 1, "m", 5}),
      ok("TF_CONFIG ps task is outside the world",
         {{"TF_CONFIG",
           R"({"cluster": {"worker": ["w:1"], "ps": ["p:2"]}, "task": {"type": "ps", "index": 0}})"}},
         {"tf-config", PP, 1, 0, 1, 1, -1, "w", 1}),
      ok("TF_CONFIG evaluator is outside the world",
         {{"TF_CONFIG",
           R"({"cluster": {"chief": ["c:1"], "worker": ["w:2"]}, "task": {"type": "evaluator", "index": 0}})"}},
         {"tf-config", PP, 2, 0, 1, 2, -1, "c", 1}),
      ok("TF_CONFIG tasks sharing a host are one node",
         {{"TF_CONFIG",
           R"({"cluster": {"worker": ["localhost:1", "localhost:2", "localhost:3"]}, "task": {"type": "worker", "index": 2}})"}},
         {"tf-config", PP, 1, 0, 3, 3, 2, "localhost", 1}),
      ok("TF_CONFIG wins over Open MPI", with(ompi(0, 2, 0, 2), {{"TF_CONFIG", kTf2}}),
         {"tf-config", PP, 3, 2, 1, 3, 2, "host0", 2222}),
      ok("TF_CONFIG without a task is not a rank",
         {{"TF_CONFIG", R"({"cluster": {"worker": ["a:1"]}})"}},
         {"standalone", PN, 1, 0, 1, 1, 0, "127.0.0.1", 0}),
      bad("TF_CONFIG is not JSON", {{"TF_CONFIG", R"({"cluster": {"worker": ["a:1")"}},
          "TF_CONFIG"),
      bad("TF_CONFIG index past the workers",
          {{"TF_CONFIG",
            R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1}})"}},
          "TF_CONFIG"),
      bad("TF_CONFIG with chief and master",
          {{"TF_CONFIG",
            R"({"cluster": {"chief": ["a:1"], "master": ["b:1"]}, "task": {"type": "chief", "index": 0}})"}},
          "TF_CONFIG"),
      bad("TF_CONFIG unknown task type",
          {{"TF_CONFIG",
            R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "boss", "index": 0}})"}},
          "TF_CONFIG"),
      bad("TF_CONFIG master without a port",
          {{"TF_CONFIG",
            R"({"cluster": {"worker": ["a", "b:1"]}, "task": {"type": "worker", "index": 1}})"}},
          "TF_CONFIG"),
      bad("TF_CONFIG with a number JSON cannot hold", {{"TF_CONFIG", "[1E400]"}}, "TF_CONFIG"),
      bad("TF_CONFIG negative index",
          {{"TF_CONFIG",
            R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": -1}})"}},
          "TF_CONFIG"),

      // --- Open MPI ---
      ok("Azure ML MPI per-process: master from AZ_BATCH_MASTER_NODE, its port not used",
         with(ompi(5, 8, 1, 4),
              {{"OMPI_COMM_WORLD_NODE_RANK", "1"}, {"AZ_BATCH_MASTER_NODE", "10.0.0.4:6000"}}),
         {"openmpi", PP, 2, 1, 4, 8, 5, "10.0.0.4", 6105}),
      ok("Azure ML MPI per-node: four workers asked for",
         with(ompi(1, 2, 0, 1), {{"AZ_BATCH_MASTER_NODE", "10.0.0.4:6000"}}),
         {"openmpi", PN, 2, 1, 4, 8, 4, "10.0.0.4", 6105}, nproc(4)),
      ok("AZ_BATCH_MASTER_NODE with an IPv6 address",
         with(ompi(3, 4, 1, 2), {{"AZ_BATCH_MASTER_NODE", "[fd00::4]:6000"}}),
         {"openmpi", PP, 2, 1, 2, 4, 3, "fd00::4", 6105}),
      ok("AZ_BATCHAI_MPI_MASTER_NODE when nothing else",
         with(ompi(3, 4, 1, 2), {{"AZ_BATCHAI_MPI_MASTER_NODE", "10.0.0.9"}}),
         {"openmpi", PP, 2, 1, 2, 4, 3, "10.0.0.9", 6105}),
      ok("MASTER_ADDR and MASTER_PORT win for Open MPI",
         with(ompi(3, 4, 1, 2),
              {{"MASTER_ADDR", "m"}, {"MASTER_PORT", "7777"}, {"AZ_BATCH_MASTER_NODE", "x:1"}}),
         {"openmpi", PP, 2, 1, 2, 4, 3, "m", 7777}),
      ok("single-node Open MPI needs no master", ompi(2, 4, 2, 4),
         {"openmpi", PP, 1, 0, 4, 4, 2, "127.0.0.1", 6105}),
      ok("OMPI_COMM_WORLD_NODE_RANK is not a node index",
         with(ompi(6, 8, 2, 4), {{"OMPI_COMM_WORLD_NODE_RANK", "2"}, {"MASTER_ADDR", "m"}}),
         {"openmpi", PP, 2, 1, 4, 8, 6, "m", 6105}),
      ok("--nproc-per-node equal to the local size is not a contradiction", ompi(1, 4, 1, 4),
         {"openmpi", PP, 1, 0, 4, 4, 1, "127.0.0.1", 6105}, nproc(4)),
      bad("multi-node Open MPI without any master", ompi(5, 8, 1, 4), "MASTER_ADDR"),
      bad("--nproc-per-node where MPI already started several per node", ompi(1, 4, 1, 4),
          "--nproc-per-node", nproc(8)),
      bad("Open MPI size not a multiple of the local size",
          with(ompi(1, 5, 1, 2), {{"MASTER_ADDR", "m"}}), "OMPI_COMM_WORLD_SIZE"),
      bad("Open MPI rank past the size", ompi(4, 4, 0, 4), "OMPI_COMM_WORLD_RANK"),
      bad("Open MPI local rank past the local size", ompi(1, 4, 4, 4),
          "OMPI_COMM_WORLD_LOCAL_RANK"),
      bad("Open MPI negative rank", with(ompi(0, 4, 0, 4), {{"OMPI_COMM_WORLD_RANK", "-1"}}),
          "OMPI_COMM_WORLD_RANK"),
      bad("AZ_BATCH_MASTER_NODE with a bad port",
          with(ompi(5, 8, 1, 4), {{"AZ_BATCH_MASTER_NODE", "10.0.0.4:99999"}}),
          "AZ_BATCH_MASTER_NODE"),
      bad("MASTER_ADDR holding a port", with(ompi(5, 8, 1, 4), {{"MASTER_ADDR", "10.0.0.4:6000"}}),
          "MASTER_ADDR"),

      // --- MPICH / MVAPICH ---
      ok("MPICH (Hydra)",
         {{"PMI_RANK", "2"},
          {"PMI_SIZE", "4"},
          {"MPI_LOCALRANKID", "0"},
          {"MPI_LOCALNRANKS", "2"},
          {"MASTER_ADDR", "h0"},
          {"MASTER_PORT", "29500"}},
         {"mpich", PP, 2, 1, 2, 4, 2, "h0", 29500}),
      ok("MVAPICH2",
         {{"MV2_COMM_WORLD_RANK", "3"},
          {"MV2_COMM_WORLD_SIZE", "4"},
          {"MV2_COMM_WORLD_LOCAL_RANK", "1"},
          {"MV2_COMM_WORLD_LOCAL_SIZE", "2"},
          {"PMI_RANK", "3"},
          {"PMI_SIZE", "4"},
          {"MASTER_ADDR", "h"}},
         {"mvapich", PP, 2, 1, 2, 4, 3, "h", 29500}),
      bad("MPICH without its local variables", {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}},
          "MPI_LOCALRANKID"),

      // --- Slurm ---
      ok("Slurm step: master is the first host of the step, port from the job id",
         with(slurm("5", "8", "1", "1", "4(x2)", "gpu[007-008]"),
              {{"SLURM_JOB_NODELIST", "gpu[001-008]"}}),
         {"slurm", PP, 2, 1, 4, 8, 5, "gpu007", 18456}),
      ok("Slurm hostlist with two bracket groups",
         with(slurm("0", "4", "0", "0", "1(x4)", "rack[2-3]_blade[08-09]"),
              {{"SLURM_JOB_ID", "77"}}),
         {"slurm", PP, 4, 0, 1, 4, 0, "rack2_blade08", 15077}),
      ok("Slurm uneven tasks per node", slurm("4", "5", "0", "1", "4,1", "n[1-2]"),
         {"slurm", PP, 2, 1, 1, 5, 4, "n1", 18456}),
      ok("Slurm falls back to the job node list",
         {{"SLURM_JOB_ID", "9"},
          {"SLURM_STEP_ID", "1"},
          {"SLURM_PROCID", "1"},
          {"SLURM_NTASKS", "2"},
          {"SLURM_LOCALID", "0"},
          {"SLURM_NODEID", "1"},
          {"SLURM_NTASKS_PER_NODE", "1"},
          {"SLURM_JOB_NODELIST", "a1,b2"}},
         // Step 1 of job 9: the job's port moved on by 7919, its own.
         {"slurm", PP, 2, 1, 1, 2, 1, "a1", 15000 + (9 + 7919) % 10000}),
      ok("Slurm one task per node, --nproc-per-node 4 spawns",
         slurm("1", "2", "0", "1", "1(x2)", "n[1-2]"), {"slurm", PN, 2, 1, 4, 8, 4, "n1", 18456},
         nproc(4)),
      ok("Slurm MASTER_ADDR and MASTER_PORT win",
         with(slurm("0", "2", "0", "0", "2", "n1"),
              {{"MASTER_ADDR", "x"}, {"MASTER_PORT", "4000"}}),
         {"slurm", PP, 1, 0, 2, 2, 0, "x", 4000}),
      bad("Slurm reversed hostlist range", slurm("0", "2", "0", "0", "1(x2)", "gpu[3-1]"),
          "SLURM_STEP_NODELIST"),
      bad("Slurm unbalanced bracket", slurm("0", "2", "0", "0", "1(x2)", "gpu[1-2"),
          "SLURM_STEP_NODELIST"),
      bad("Slurm tasks per node not adding up", slurm("0", "8", "0", "0", "2(x2)", "n[1-2]"),
          "SLURM_STEP_TASKS_PER_NODE"),
      bad("Slurm malformed tasks per node", slurm("0", "2", "0", "0", "2(x", "n[1-2]"),
          "SLURM_STEP_TASKS_PER_NODE"),
      bad("Slurm node id past the nodes", slurm("0", "2", "0", "3", "1(x2)", "n[1-2]"),
          "SLURM_NODEID"),

      // --- Kubeflow ---
      ok("Kubeflow PyTorchJob: RANK and WORLD_SIZE count pods",
         {{"PET_NNODES", "3"},
          {"PET_NODE_RANK", "2"},
          {"PET_NPROC_PER_NODE", "2"},
          {"PET_MASTER_ADDR", "job-master-0"},
          {"PET_MASTER_PORT", "23456"},
          {"MASTER_ADDR", "job-master-0"},
          {"MASTER_PORT", "23456"},
          {"RANK", "2"},
          {"WORLD_SIZE", "3"}},
         {"kubeflow", PN, 3, 2, 2, 6, 4, "job-master-0", 23456}),
      ok("Kubeflow nproc auto with GPUs",
         {{"PET_NNODES", "2"},
          {"PET_NODE_RANK", "0"},
          {"PET_NPROC_PER_NODE", "auto"},
          {"PET_MASTER_ADDR", "m"}},
         {"kubeflow", PN, 2, 0, 8, 16, 0, "m", 29500}, {}, 8),
      ok("Kubeflow fixed elastic range min == max",
         {{"PET_NNODES", "2:2"},
          {"PET_NODE_RANK", "1"},
          {"PET_NPROC_PER_NODE", "1"},
          {"PET_MASTER_ADDR", "m"}},
         {"kubeflow", PN, 2, 1, 1, 2, 1, "m", 29500}),
      ok("Kubeflow elastic range with --nnodes",
         {{"PET_NNODES", "1:4"},
          {"PET_NODE_RANK", "1"},
          {"PET_NPROC_PER_NODE", "1"},
          {"PET_MASTER_ADDR", "m"}},
         {"kubeflow", PN, 3, 1, 1, 3, 1, "m", 29500}, {.nnodes = 3}),
      ok("Kubeflow flags override PET_NPROC_PER_NODE",
         {{"PET_NNODES", "2"},
          {"PET_NODE_RANK", "1"},
          {"PET_NPROC_PER_NODE", "8"},
          {"PET_MASTER_ADDR", "m"}},
         {"kubeflow", PN, 2, 1, 2, 4, 2, "m", 29500}, nproc(2)),
      bad("Kubeflow PET_NNODES not a number",
          {{"PET_NNODES", "abc"},
           {"PET_NODE_RANK", "0"},
           {"PET_MASTER_ADDR", "m"},
           {"PET_MASTER_PORT", "1"}},
          "PET_NNODES"),
      bad("Kubeflow elastic range upside down",
          {{"PET_NNODES", "4:1"}, {"PET_NODE_RANK", "0"}, {"PET_MASTER_ADDR", "m"}}, "PET_NNODES"),
      bad("Kubeflow nproc gpu without a GPU",
          {{"PET_NNODES", "1"}, {"PET_NODE_RANK", "0"}, {"PET_NPROC_PER_NODE", "gpu"}},
          "PET_NPROC_PER_NODE"),
      bad("Kubeflow node rank past the nodes",
          {{"PET_NNODES", "2"}, {"PET_NODE_RANK", "2"}, {"PET_MASTER_ADDR", "m"}}, "PET_NODE_RANK"),
      bad("Kubeflow multi-node without a master", {{"PET_NNODES", "2"}, {"PET_NODE_RANK", "1"}},
          "PET_MASTER_ADDR"),
      bad("Kubeflow rdzvBackend etcd-v2: etcd's v2 API, refused rather than waited on",
          {{"PET_NNODES", "2:4"},
           {"PET_RDZV_ENDPOINT", "etcd:2379"},
           {"PET_RDZV_BACKEND", "etcd-v2"}},
          "PET_RDZV_BACKEND"),
      bad("Kubeflow rdzvBackend of nobody's",
          {{"PET_NNODES", "2:4"}, {"PET_RDZV_ENDPOINT", "e:1"}, {"PET_RDZV_BACKEND", "zookeeper"}},
          "PET_RDZV_BACKEND"),
      bad("Kubeflow rdzvBackend etcd with a member that is no host:port",
          {{"PET_NNODES", "2:4"},
           {"PET_RDZV_ENDPOINT", "e0:2379,:x"},
           {"PET_RDZV_BACKEND", "etcd"}},
          "PET_RDZV_ENDPOINT"),
      ok("Kubeflow rdzvBackend etcd: the endpoint lists etcd's members",
         {{"PET_NNODES", "2"},
          {"PET_NODE_RANK", "1"},
          {"PET_RDZV_ENDPOINT", "e0:2379,e1:2379"},
          {"PET_RDZV_BACKEND", "etcd"}},
         {"kubeflow", PN, 2, 1, 1, 2, 1, "e0", 2379}),
      ok("Kubeflow rdzvBackend c10d",
         {{"PET_NNODES", "2"},
          {"PET_NODE_RANK", "1"},
          {"PET_RDZV_ENDPOINT", "w0:29400"},
          {"PET_RDZV_BACKEND", "c10d"}},
         {"kubeflow", PN, 2, 1, 1, 2, 1, "w0", 29400}),

      // --- torch env:// (Azure ML PyTorch) ---
      ok("Azure ML PyTorch per-process, local size from RANK, LOCAL_RANK, NODE_RANK",
         {{"MASTER_ADDR", "10.0.0.4"},
          {"MASTER_PORT", "6105"},
          {"WORLD_SIZE", "8"},
          {"NODE_RANK", "1"},
          {"RANK", "5"},
          {"LOCAL_RANK", "1"},
          {"AZUREML_RUN_ID", "run_42"}},
         {"torch-env", PP, 2, 1, 4, 8, 5, "10.0.0.4", 6105}),
      ok("Azure ML PyTorch per-node launch, four workers",
         {{"MASTER_ADDR", "10.0.0.4"},
          {"MASTER_PORT", "6105"},
          {"WORLD_SIZE", "2"},
          {"NODE_RANK", "1"},
          {"RANK", "1"},
          {"LOCAL_RANK", "0"}},
         {"torch-env", PN, 2, 1, 4, 8, 4, "10.0.0.4", 6105}, nproc(4)),
      ok("Azure ML PyTorch per-node launch, node 0",
         {{"MASTER_ADDR", "10.0.0.4"},
          {"MASTER_PORT", "6105"},
          {"WORLD_SIZE", "2"},
          {"NODE_RANK", "0"},
          {"RANK", "0"},
          {"LOCAL_RANK", "0"}},
         {"torch-env", PN, 2, 0, 4, 8, 0, "10.0.0.4", 6105}, nproc(4)),
      ok("torch env with LOCAL_WORLD_SIZE",
         {{"RANK", "3"},
          {"WORLD_SIZE", "4"},
          {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "2"},
          {"MASTER_ADDR", "m"},
          {"MASTER_PORT", "1"}},
         {"torch-env", PP, 2, 1, 2, 4, 3, "m", 1}),
      ok("torch env on node 0 takes the GPU count as local size",
         {{"RANK", "1"},
          {"WORLD_SIZE", "8"},
          {"LOCAL_RANK", "1"},
          {"NODE_RANK", "0"},
          {"MASTER_ADDR", "m"}},
         {"torch-env", PP, 2, 0, 4, 8, 1, "m", 29500}, {}, 4),
      ok("bare RANK and WORLD_SIZE on one machine", {{"RANK", "1"}, {"WORLD_SIZE", "2"}},
         {"torch-env", PP, 1, 0, 2, 2, 1, "127.0.0.1", 29500}),
      ok("torch env flags override master",
         {{"MASTER_ADDR", "10.0.0.4"},
          {"MASTER_PORT", "6105"},
          {"WORLD_SIZE", "2"},
          {"NODE_RANK", "1"},
          {"RANK", "1"},
          {"LOCAL_RANK", "0"}},
         {"torch-env", PN, 2, 1, 2, 4, 2, "10.9.9.9", 7000},
         {.nproc_per_node = 2, .master_addr = "10.9.9.9", .master_port = 7000}),
      ok("torch env per-node: NODE_RANK and MASTER_ADDR without RANK",
         {{"NODE_RANK", "1"}, {"MASTER_ADDR", "m"}, {"WORLD_SIZE", "3"}},
         {"torch-env", PN, 3, 1, 2, 6, 2, "m", 29500}, {}, 2),
      bad("RANK not below WORLD_SIZE",
          {{"RANK", "8"},
           {"WORLD_SIZE", "8"},
           {"LOCAL_RANK", "0"},
           {"MASTER_ADDR", "h"},
           {"MASTER_PORT", "1"}},
          "RANK"),
      bad("port out of range",
          {{"RANK", "0"},
           {"WORLD_SIZE", "2"},
           {"LOCAL_RANK", "0"},
           {"MASTER_ADDR", "h"},
           {"MASTER_PORT", "70000"}},
          "MASTER_PORT"),
      bad("port zero", {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "0"}}, "MASTER_PORT"),
      bad("negative WORLD_SIZE", {{"RANK", "0"}, {"WORLD_SIZE", "-2"}}, "WORLD_SIZE"),
      bad("WORLD_SIZE zero", {{"RANK", "0"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE"),
      bad("RANK with spaces", {{"RANK", " 1"}, {"WORLD_SIZE", "2"}}, "RANK"),
      bad("RANK in hex", {{"RANK", "0x1"}, {"WORLD_SIZE", "2"}}, "RANK"),
      bad("torch env variables disagree",
          {{"RANK", "3"},
           {"WORLD_SIZE", "8"},
           {"LOCAL_RANK", "1"},
           {"LOCAL_WORLD_SIZE", "4"},
           {"NODE_RANK", "1"},
           {"MASTER_ADDR", "m"}},
          "RANK"),
      bad("LOCAL_RANK past LOCAL_WORLD_SIZE",
          {{"RANK", "2"},
           {"WORLD_SIZE", "4"},
           {"LOCAL_RANK", "2"},
           {"LOCAL_WORLD_SIZE", "2"},
           {"MASTER_ADDR", "m"}},
          "LOCAL_RANK"),
      bad("torch env per-node without a node count", {{"NODE_RANK", "0"}, {"MASTER_ADDR", "m"}},
          "WORLD_SIZE"),

      // --- SageMaker ---
      ok("SageMaker",
         {{"SM_HOSTS", R"(["algo-1", "algo-2"])"},
          {"SM_CURRENT_HOST", "algo-2"},
          {"SM_NUM_GPUS", "8"}},
         {"sagemaker", PN, 2, 1, 8, 16, 8, "algo-1", 29500}),
      ok("SageMaker CPU instance",
         {{"SM_HOSTS", R"(["algo-1"])"}, {"SM_CURRENT_HOST", "algo-1"}, {"SM_NUM_GPUS", "0"}},
         {"sagemaker", PN, 1, 0, 1, 1, 0, "algo-1", 29500}),
      bad("SageMaker current host not listed",
          {{"SM_HOSTS", R"(["algo-1"])"}, {"SM_CURRENT_HOST", "algo-9"}}, "SM_CURRENT_HOST"),
      bad("SageMaker hosts not JSON",
          {{"SM_HOSTS", "algo-1,algo-2"}, {"SM_CURRENT_HOST", "algo-1"}}, "SM_HOSTS"),
      bad("SageMaker hosts not strings", {{"SM_HOSTS", "[1, 2]"}, {"SM_CURRENT_HOST", "algo-1"}},
          "SM_HOSTS"),

      // --- LSF ---
      ok("LSF with MASTER_ADDR",
         {{"JSM_NAMESPACE_RANK", "7"},
          {"JSM_NAMESPACE_SIZE", "12"},
          {"JSM_NAMESPACE_LOCAL_RANK", "1"},
          {"JSM_NAMESPACE_LOCAL_SIZE", "6"},
          {"MASTER_ADDR", "h1"}},
         {"lsf", PP, 2, 1, 6, 12, 7, "h1", 29500}),
  };
}

// gtest prints a failing parameter with this instead of its bytes.
void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

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
}  // namespace aml
