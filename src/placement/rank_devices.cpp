#include "placement/rank_devices.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

namespace aml {
namespace {

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

// What two devices share of the PCI tree below /sys/devices: how many places (1 is the same
// host bridge, pci0000:00; each more a bridge or switch port above both; the devices' own
// directories are never shared) and the deepest of them.
struct SharedPlace {
  int depth = 0;
  std::string place;
};

SharedPlace shared_place(const std::string& a, const std::string& b) {
  const auto pa = components(a), pb = components(b);
  std::size_t same = 0;
  while (same < pa.size() && same < pb.size() && pa[same] == pb[same]) ++same;
  constexpr std::size_t kBelowDevices = 2;  // "sys", "devices"
  if (same <= kBelowDevices) return {};
  return {static_cast<int>(same - kBelowDevices), pa[same - 1]};
}

int node_distance(const MachineLayout& machine, std::optional<int> from, std::optional<int> to) {
  if (!from || !to) return INT_MAX / 2;
  if (*from == *to) return 0;
  const NumaNode* node = machine.node(*from);
  if (node == nullptr || static_cast<std::size_t>(*to) >= node->distance.size()) return INT_MAX / 2;
  return node->distance[static_cast<std::size_t>(*to)];
}

}  // namespace

std::vector<std::pair<int, std::string>> nearest_nics(const MachineLayout& machine) {
  std::vector<std::pair<int, std::string>> out(machine.gpus.size(),
                                               {-1, "no RDMA NIC on this node"});
  if (machine.nics.empty()) return out;
  // Beside InfiniBand NICs, an Ethernet RDMA device is the front-end network (Azure's
  // mlx5_an0): only where there is no InfiniBand is RoCE the training network.
  const bool infiniband = std::any_of(machine.nics.begin(), machine.nics.end(), [](const Nic& nic) {
    return nic.link_layer == "InfiniBand";
  });
  std::map<std::vector<int>, int> taken;  // a set of equally near NICs → GPUs served so far
  for (std::size_t g = 0; g < machine.gpus.size(); ++g) {
    const Gpu& gpu = machine.gpus[g];
    const auto gpu_node = machine.cpu_node_of(gpu);
    std::tuple<int, int> best{-1, INT_MIN};
    std::vector<int> nearest;
    for (std::size_t n = 0; n < machine.nics.size(); ++n) {
      const Nic& nic = machine.nics[n];
      if (infiniband && nic.link_layer != "InfiniBand") continue;
      const std::tuple<int, int> score{shared_place(gpu.path, nic.path).depth,
                                       -node_distance(machine, gpu_node, machine.cpu_node_of(nic))};
      if (score > best) {
        best = score;
        nearest.clear();
      }
      if (score == best) nearest.push_back(static_cast<int>(n));
    }
    const int turn = taken[nearest]++;
    const int nic = nearest[static_cast<std::size_t>(turn) % nearest.size()];
    const Nic& chosen = machine.nics[static_cast<std::size_t>(nic)];
    std::string why;
    if (std::get<0>(best) > 1) {
      why = "shares a PCI switch with its GPU (below " + shared_place(gpu.path, chosen.path).place +
            ")";
    } else if (std::get<0>(best) == 1) {
      why = "under its GPU's PCI host bridge (" + shared_place(gpu.path, chosen.path).place + ")";
    } else if (std::get<1>(best) == 0 && gpu_node) {
      why = "on its GPU's NUMA node " + std::to_string(*gpu_node) + " (no shared PCI switch)";
    } else {
      why = "the nearest by NUMA distance (none shares its GPU's PCI switch or NUMA node)";
    }
    if (nearest.size() > 1) {
      why += "; " + std::to_string(nearest.size()) + " NICs are as near, taken in turn";
    }
    out[g] = {nic, why};
  }
  return out;
}

std::vector<std::string> visible_device_entries(const std::optional<std::string>& text) {
  std::vector<std::string> entries;
  if (!text) return entries;
  std::size_t start = 0;
  while (start <= text->size() && !text->empty()) {
    auto comma = text->find(',', start);
    if (comma == std::string::npos) comma = text->size();
    std::string entry = text->substr(start, comma - start);
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    entries.push_back(entry);
    start = comma + 1;
  }
  return entries;
}

std::vector<RankDevices> rank_devices(const MachineLayout& machine,
                                      const std::optional<std::string>& cuda_visible_devices,
                                      int local_world_size, bool per_process) {
  std::vector<RankDevices> ranks(static_cast<std::size_t>(std::max(0, local_world_size)));
  const std::vector<std::string> entries = visible_device_entries(cuda_visible_devices);
  const auto nics = nearest_nics(machine);
  const bool task_list = task_owns_devices(per_process, entries.size(), local_world_size);
  for (std::size_t local = 0; local < ranks.size(); ++local) {
    RankDevices& rank = ranks[local];
    // The entry that names its GPU: its local rank's, or the first of its task's own list.
    const std::size_t at = task_list ? 0 : local;
    const int count = static_cast<int>(machine.gpus.size());
    if (!cuda_visible_devices) {
      if (static_cast<int>(local) < count) {
        rank.gpu = static_cast<int>(local);
        rank.label =
            "GPU " + std::to_string(local) + ": its local rank, CUDA_VISIBLE_DEVICES not set";
      } else {
        rank.label = count == 0 ? "no NVIDIA GPU on this node"
                                : "no GPU: local rank " + std::to_string(local) + " of " +
                                      std::to_string(count) + " GPUs";
      }
    } else if (at >= entries.size()) {
      rank.label = "no GPU: CUDA_VISIBLE_DEVICES=" + *cuda_visible_devices + " has no entry " +
                   std::to_string(local);
    } else {
      const std::string& entry = entries[at];
      const std::string where = task_list
                                    ? " (CUDA_VISIBLE_DEVICES entry 0, the task's own list of " +
                                          std::to_string(entries.size()) + ")"
                                    : " (CUDA_VISIBLE_DEVICES entry " + std::to_string(local) + ")";
      if (!entry.empty() && std::all_of(entry.begin(), entry.end(), ::isdigit)) {
        const int index = std::atoi(entry.c_str());
        if (index < count) {
          rank.gpu = index;
          rank.label = "GPU " + entry + ": " + where.substr(2, where.size() - 3);
        } else {
          rank.label = "no GPU: " + entry + where + " is not one of this node's " +
                       std::to_string(count) + " GPUs";
        }
      } else {
        int found = -1, matches = 0;
        for (int g = 0; g < count; ++g) {
          const std::string& uuid = machine.gpus[static_cast<std::size_t>(g)].uuid;
          if (!uuid.empty() && entry.size() > 4 && uuid.starts_with(entry)) {
            found = g;
            ++matches;
          }
        }
        if (matches == 1) {
          rank.gpu = found;
          rank.label = "GPU " + std::to_string(found) + ", " + entry + where;
        } else {
          rank.label =
              "no GPU: " + entry + where +
              (entry.starts_with("MIG-") ? " is a MIG instance (its GPU is not known without NVML)"
               : matches > 1             ? " matches several GPUs' UUIDs"
                                         : " matches no GPU UUID the NVIDIA driver lists");
        }
      }
    }
    if (rank.gpu >= 0) {
      std::tie(rank.nic, rank.nic_reason) = nics[static_cast<std::size_t>(rank.gpu)];
    } else {
      rank.nic_reason = "no GPU to be near";
    }
  }
  return ranks;
}

}  // namespace aml
