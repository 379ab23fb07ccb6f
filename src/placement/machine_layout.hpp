// What the machine is made of, for placing ranks: CPUs (socket, core, L3), NUMA nodes, GPUs
// and RDMA NICs with their PCI places, and what this launcher was given. Read from /sys only
// (and the NVIDIA driver's /proc/driver/nvidia/gpus for GPU UUIDs); no libnuma, no NVML.
#pragma once

#include <aml/error.hpp>
#include <optional>
#include <string>
#include <vector>

#include "placement/cpu_list.hpp"

namespace aml {

struct CpuInfo {
  int id = 0;
  int socket = 0;
  int core = 0;  // a number for its core, the same for a core's hyper-threads
  int l3 = -1;   // the first CPU of its L3 group (a core complex); -1 when unknown
};

struct NumaNode {
  int id = 0;
  CpuList cpus;               // empty: a memory-only node (GPU memory on Grace systems)
  std::vector<int> distance;  // to node 0, 1, ... as the firmware reports (10 = itself)
};

struct PciDevice {
  std::string address;  // "0000:17:00.0"
  std::string path;     // its directory under /sys/devices: the PCI tree above it
  int numa_node = -1;   // -1: the firmware does not say
  CpuList local_cpus;
};

struct Gpu : PciDevice {
  std::string uuid;  // "GPU-…" from the NVIDIA driver, "" when it is not loaded
};

struct Nic : PciDevice {
  std::string name;        // "mlx5_0"
  int port = 1;            // its first port
  std::string link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
};

struct MachineLayout {
  std::vector<CpuInfo> cpus;  // online CPUs, by id
  std::vector<NumaNode> nodes;
  std::vector<Gpu> gpus;  // NVIDIA GPUs in PCI order: CUDA's numbering on a node of one kind
  std::vector<Nic> nics;
  CpuList allowed_cpus;  // this launcher's affinity (taskset, Slurm, a cgroup cpuset)
  CpuList allowed_mems;  // its cpuset's memory nodes
  CpuList granted_cpus;  // its cgroup's cpuset (the container's), else every online CPU
  std::string source;    // "/" or the root a test named

  const CpuInfo* cpu(int id) const;
  const NumaNode* node(int id) const;
  CpuList online_cpus() const;
  CpuList cpu_nodes() const;  // the nodes that have CPUs
  // The node with CPUs a device belongs to: its own, else the one its local CPUs are on, else
  // the nearest by distance to a memory-only node; nullopt when nothing says.
  std::optional<int> cpu_node_of(const PciDevice& device) const;
  // The cores (a core's threads together) among these CPUs, in order of their first CPU.
  std::vector<CpuList> cores_among(const CpuList& cpus) const;
};

// The machine under `root` ("/" for this one; a test's copy of /sys and /proc under another).
// An error names the file that could not be read or understood.
Result<MachineLayout> read_machine_layout(const std::string& root);

// Two reads instead of the whole layout: true where the machine has one NUMA node and no RDMA
// NIC, so that auto would bind nothing and there is no NIC to name (most small VMs).
bool one_node_without_rdma(const std::string& root);

}  // namespace aml
