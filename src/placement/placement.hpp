// Where each local rank runs (DESIGN §3, --bind): the CPUs and memory nearest its GPU, its
// share of them, its thread count and its nearest RDMA NIC. Pure: a MachineLayout and the
// request in, the placement out (the spawn applies it; --dry-run prints it).
#pragma once

#include <aml/error.hpp>
#include <optional>
#include <string>
#include <vector>

#include "placement/cpu_list.hpp"
#include "placement/machine_layout.hpp"

namespace aml {

enum class BindMode { none, node, socket, exclusive, core_complex, automatic };
enum class MemoryPolicy { preferred, bind, none };

std::string to_string(BindMode mode);
std::string to_string(MemoryPolicy policy);
std::optional<BindMode> bind_mode_from(const std::string& text);
std::optional<MemoryPolicy> memory_policy_from(const std::string& text);

struct PlacementRequest {
  BindMode mode = BindMode::automatic;
  MemoryPolicy memory = MemoryPolicy::preferred;
  int local_world_size = 1;      // ranks on this node
  std::vector<int> local_ranks;  // the ones this launcher starts (all, or its one rank)
  std::optional<std::string> cuda_visible_devices;
  bool per_process = false;       // the scheduler started each rank (srun, mpirun)
  std::string scheduler_binding;  // "SLURM_CPU_BIND_TYPE=mask_cpu:" where one bound tasks
};

struct RankPlacement {
  int local_rank = 0;
  std::string gpu;        // its GPU's PCI address; "" without one
  std::string gpu_label;  // how it was found: "GPU 2 (CUDA_VISIBLE_DEVICES entry 0)"
  std::optional<int> numa_node;
  CpuList cpus;  // empty: not bound, it keeps the launcher's CPUs
  MemoryPolicy memory = MemoryPolicy::none;
  CpuList memory_nodes;  // the memory policy's nodes (empty with none)
  int threads = 0;       // OMP_NUM_THREADS for it; 0: the launcher's default share
  std::string nic;       // nearest RDMA NIC ("mlx5_3"); "" without one
  int nic_port = 1;
  std::string nic_reason;
  std::string why;  // why these CPUs
};

struct Placement {
  BindMode requested = BindMode::automatic;
  BindMode applied = BindMode::none;
  std::string reason;                // why this mode (what auto chose, or why nothing was bound)
  std::vector<RankPlacement> ranks;  // one per local rank of the request, in that order
  // The RDMA NICs NCCL would choose among ("mlx5_0 (0000:0c:00.0, NUMA 1, InfiniBand)").
  std::vector<std::string> nics;
};

// An error when a mode cannot be done as asked (exclusive with more ranks than cores, a mode
// that needs the machine's layout where it could not be read).
Result<Placement> place_ranks(const MachineLayout& machine, const PlacementRequest& request);

// What auto says on a machine of one NUMA node.
inline constexpr const char* kAutoOneNode =
    "auto: one NUMA node with CPUs: binding would gain nothing";

// Only what says that nothing will be bound (none, or auto where the machine could not be
// read): the request, and why.
Placement unbound(const PlacementRequest& request, std::string reason);

}  // namespace aml
