#include "placement_setup.hpp"

#include <numeric>

namespace aml {
namespace {

// Slurm's word for how it bound this task (SLURM_CPU_BIND_TYPE: "mask_cpu:", "cores,", ...);
// "" when it bound nothing.
std::string slurm_binding(const Env& env) {
  const std::string* type = find(env, "SLURM_CPU_BIND_TYPE");
  if (type == nullptr) return "";
  for (const char* bound : {"mask_cpu", "map_cpu", "mask_ldom", "map_ldom", "rank", "cores",
                            "sockets", "threads", "ldoms"}) {
    if (type->find(bound) != std::string::npos) return "SLURM_CPU_BIND_TYPE=" + *type;
  }
  return "";
}

}  // namespace

Result<Placement> placement_for(const Options& options, const Topology& topology, const Env& env) {
  PlacementRequest request;
  request.mode = options.bind;
  request.memory = options.memory_policy;
  request.per_process = topology.launch == Launch::per_process;
  request.local_world_size = std::max(1, topology.nproc_per_node);
  if (request.per_process) {
    request.local_ranks = {topology.local_rank};
  } else {
    request.local_ranks.resize(static_cast<std::size_t>(request.local_world_size));
    std::iota(request.local_ranks.begin(), request.local_ranks.end(), 0);
  }
  if (const std::string* devices = find(env, "CUDA_VISIBLE_DEVICES")) {
    request.cuda_visible_devices = *devices;
  }
  request.scheduler_binding = slurm_binding(env);
  if (request.mode == BindMode::none) return unbound(request, "--bind none");
  const std::string* root_variable = find(env, "AML_LAUNCH_MACHINE_ROOT");
  const std::string root =
      root_variable != nullptr && !root_variable->empty() ? *root_variable : "/";
  if (request.mode == BindMode::automatic && !options.dry_run && one_node_without_rdma(root)) {
    return unbound(request, kAutoOneNode);  // the launch need not read the rest
  }
  auto machine = read_machine_layout(root);
  if (!machine) {
    if (request.mode != BindMode::automatic) {
      Error error = machine.error();
      error.expected += " (--bind " + to_string(request.mode) + " reads the machine's layout)";
      return error;
    }
    return unbound(request, "auto: the machine's layout could not be read (" +
                                machine.error().message() + ")");
  }
  return place_ranks(*machine, request);
}

WorkerBinding worker_binding(const std::optional<RankPlacement>& placement) {
  WorkerBinding binding;
  if (!placement || placement->cpus.empty()) return binding;
  binding.cpus = placement->cpus;
  if (placement->memory != MemoryPolicy::none && !placement->memory_nodes.empty()) {
    binding.memory = placement->memory == MemoryPolicy::bind ? WorkerBinding::Memory::bind
                                                             : WorkerBinding::Memory::preferred;
    binding.memory_nodes = placement->memory_nodes;
  }
  return binding;
}

}  // namespace aml
