// libFuzzer target over every parser of scheduler text: TF_CONFIG, SM_HOSTS (through detection),
// Slurm hostlists and task counts, numbers, host:port, and whole environments.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "topology/detect.hpp"
#include "topology/host_port.hpp"
#include "topology/hostlist.hpp"
#include "topology/numbers.hpp"
#include "topology/tasks_per_node.hpp"
#include "topology/tf_config.hpp"

namespace {

// Variables the sources read; an environment is built by picking among them.
constexpr std::string_view kVariables[] = {
    "TORCHELASTIC_RUN_ID",
    "AML_LAUNCH_WORKER",
    "TF_CONFIG",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "AZ_BATCH_MASTER_NODE",
    "PMI_RANK",
    "PMI_SIZE",
    "MPI_LOCALRANKID",
    "MPI_LOCALNRANKS",
    "MV2_COMM_WORLD_RANK",
    "SLURM_PROCID",
    "SLURM_STEP_ID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_NODEID",
    "SLURM_STEP_TASKS_PER_NODE",
    "SLURM_STEP_NODELIST",
    "SLURM_JOB_ID",
    "PET_NNODES",
    "PET_NODE_RANK",
    "PET_NPROC_PER_NODE",
    "PET_MASTER_ADDR",
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "NODE_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "SM_HOSTS",
    "SM_CURRENT_HOST",
    "SM_NUM_GPUS",
    "JSM_NAMESPACE_RANK",
    "JSM_NAMESPACE_SIZE",
    "JSM_NAMESPACE_LOCAL_RANK",
    "JSM_NAMESPACE_LOCAL_SIZE",
    "LSB_DJOB_RANKFILE",
    "CUDA_VISIBLE_DEVICES",
    "GROUP_RANK",
    "GROUP_WORLD_SIZE",
    "ROLE_NAME",
};

void fuzz_environment(std::string_view data) {
  // Lines of "<index byte><value>": the byte picks the variable.
  aml::Env env;
  std::size_t start = 0;
  while (start < data.size()) {
    std::size_t end = data.find('\n', start);
    if (end == std::string_view::npos) end = data.size();
    std::string_view line = data.substr(start, end - start);
    if (!line.empty()) {
      std::string_view name =
          kVariables[static_cast<unsigned char>(line[0]) % std::size(kVariables)];
      env[std::string(name)] = std::string(line.substr(1));
    }
    start = end + 1;
  }
  aml::Machine machine{[] { return 2; }, [](const std::string&) { return std::string("a\nb\n"); },
                       [] { return 4; }};
  auto result = aml::detect_topology(env, machine);
  if (result) {
    const aml::Topology& t = *result;
    // Invariants every accepted topology must keep.
    if (t.nnodes < 1 || t.node_rank < 0 || t.node_rank >= t.nnodes || t.nproc_per_node < 1 ||
        t.world_size < 1 || t.rank >= t.world_size || t.master_addr.empty()) {
      __builtin_trap();
    }
  } else if (result.error().message().empty()) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  switch (bytes[0] % 6) {
    case 0:
      (void)aml::parse_tf_config(text);
      (void)aml::tf_config_has_task(text);
      break;
    case 1:
      (void)aml::expand_hostlist("SLURM_STEP_NODELIST", text, 4096);
      break;
    case 2:
      (void)aml::expand_tasks_per_node("SLURM_STEP_TASKS_PER_NODE", text);
      break;
    case 3:
      (void)aml::parse_number("N", text, 0, aml::kMaxCount);
      (void)aml::parse_port("P", text);
      break;
    case 4:
      (void)aml::split_host_port("AZ_BATCH_MASTER_NODE", text);
      break;
    default:
      fuzz_environment(text);
      break;
  }
  return 0;
}
