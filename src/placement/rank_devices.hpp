// Each local rank's GPU (its entry of CUDA_VISIBLE_DEVICES, by index or UUID, else the GPU of
// its local rank's number) and the RDMA NIC nearest that GPU in the PCI tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "placement/machine_layout.hpp"

namespace aml {

struct RankDevices {
  int gpu = -1;       // index into MachineLayout::gpus; -1: none
  std::string label;  // how it was found, or why there is none
  int nic = -1;       // index into MachineLayout::nics; -1: none
  std::string nic_reason;
};

// CUDA_VISIBLE_DEVICES's entries, trimmed (none where it is not set or empty).
std::vector<std::string> visible_device_entries(const std::optional<std::string>& text);

// For local ranks 0 .. local_world_size - 1. per_process: the scheduler started each rank, and
// a CUDA_VISIBLE_DEVICES of fewer entries than ranks is the task's own (srun --gpus-per-task):
// its first entry is every rank's GPU, whatever its local rank.
std::vector<RankDevices> rank_devices(const MachineLayout& machine,
                                      const std::optional<std::string>& cuda_visible_devices,
                                      int local_world_size, bool per_process = false);

// Whether a per-process rank's CUDA_VISIBLE_DEVICES is its task's own list, which its scheduler
// made for it alone, rather than the node's (one entry a local rank).
inline bool task_owns_devices(bool per_process, std::size_t entries, int local_world_size) {
  return per_process && entries > 0 && entries < static_cast<std::size_t>(local_world_size);
}

// For each GPU of the machine, the NIC nearest it (-1 without NICs) and why: the deepest
// shared place in the PCI tree, then the same NUMA node, then NUMA distance; GPUs that find
// the same nearest NICs take them in turn, in PCI order.
std::vector<std::pair<int, std::string>> nearest_nics(const MachineLayout& machine);

}  // namespace aml
