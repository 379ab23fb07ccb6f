#include "placement/placement.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "placement/rank_devices.hpp"

namespace aml {

std::string to_string(BindMode mode) {
  switch (mode) {
    case BindMode::none:
      return "none";
    case BindMode::node:
      return "node";
    case BindMode::socket:
      return "socket";
    case BindMode::exclusive:
      return "exclusive";
    case BindMode::core_complex:
      return "core-complex";
    case BindMode::automatic:
      return "auto";
  }
  return "none";
}

std::string to_string(MemoryPolicy policy) {
  switch (policy) {
    case MemoryPolicy::preferred:
      return "preferred";
    case MemoryPolicy::bind:
      return "bind";
    case MemoryPolicy::none:
      return "none";
  }
  return "none";
}

std::optional<BindMode> bind_mode_from(const std::string& text) {
  for (BindMode mode : {BindMode::none, BindMode::node, BindMode::socket, BindMode::exclusive,
                        BindMode::core_complex, BindMode::automatic}) {
    if (text == to_string(mode)) return mode;
  }
  return std::nullopt;
}

std::optional<MemoryPolicy> memory_policy_from(const std::string& text) {
  for (MemoryPolicy policy : {MemoryPolicy::preferred, MemoryPolicy::bind, MemoryPolicy::none}) {
    if (text == to_string(policy)) return policy;
  }
  return std::nullopt;
}

Placement unbound(const PlacementRequest& request, std::string reason) {
  Placement placement;
  placement.requested = request.mode;
  placement.reason = std::move(reason);
  for (int local : request.local_ranks) {
    RankPlacement rank;
    rank.local_rank = local;
    placement.ranks.push_back(std::move(rank));
  }
  return placement;
}

namespace {

// Where every local rank of the node belongs: its GPU's NUMA node, or (without a GPU) the
// nodes with CPUs in blocks of consecutive local ranks.
struct Home {
  int node = -1;
  std::string why;
};

std::vector<Home> homes_of(const MachineLayout& machine, const std::vector<RankDevices>& devices) {
  const CpuList nodes = machine.cpu_nodes();
  std::vector<Home> homes;
  const int count = static_cast<int>(devices.size());
  for (int local = 0; local < count; ++local) {
    const RankDevices& d = devices[static_cast<std::size_t>(local)];
    if (d.gpu >= 0) {
      const Gpu& gpu = machine.gpus[static_cast<std::size_t>(d.gpu)];
      if (auto node = machine.cpu_node_of(gpu)) {
        const std::string own = gpu.numa_node == *node ? ""
                                : gpu.numa_node >= 0
                                    ? " (its GPU's own node " + std::to_string(gpu.numa_node) +
                                          " has no CPUs: the nearest that has)"
                                    : " (its GPU's local CPUs are there)";
        homes.push_back(
            {*node, "NUMA node " + std::to_string(*node) + " of its GPU " + gpu.address + own});
        continue;
      }
    }
    const std::size_t block =
        static_cast<std::size_t>(local) * nodes.size() / static_cast<std::size_t>(count);
    homes.push_back(
        {nodes[block], std::string(d.gpu >= 0 ? "its GPU's NUMA node is not known" : "no GPU") +
                           ": local ranks spread over the " + std::to_string(nodes.size()) +
                           " NUMA node(s) with CPUs, in blocks"});
  }
  return homes;
}

CpuList cpus_of_socket(const MachineLayout& machine, int socket) {
  CpuList out;
  for (const CpuInfo& c : machine.cpus) {
    if (c.socket == socket) out.push_back(c.id);
  }
  return out;
}

CpuList flatten(const std::vector<CpuList>& lists) {
  CpuList out;
  for (const CpuList& l : lists) out.insert(out.end(), l.begin(), l.end());
  std::sort(out.begin(), out.end());
  return out;
}

// auto: node binding only where it cannot hurt; otherwise nothing, and why.
std::pair<BindMode, std::string> resolve_auto(const MachineLayout& machine,
                                              const std::vector<RankDevices>& devices,
                                              const std::vector<Home>& homes) {
  const CpuList online = machine.online_cpus();
  if (machine.allowed_cpus != online) {
    return {BindMode::none,
            "auto: this launcher may use CPUs " + cpu_list_text(machine.allowed_cpus) + " of " +
                cpu_list_text(online) + " (a shared node): binding is left to whoever shares it"};
  }
  if (machine.cpu_nodes().size() < 2) {
    return {BindMode::none, kAutoOneNode};
  }
  std::set<int> gpus;
  for (std::size_t local = 0; local < devices.size(); ++local) {
    if (devices[local].gpu < 0 || !gpus.insert(devices[local].gpu).second) {
      return {BindMode::none,
              "auto: not a GPU per rank (local rank " + std::to_string(local) + ": " +
                  (devices[local].gpu < 0 ? devices[local].label : "shares its GPU") + ")"};
    }
    if (!machine.cpu_node_of(machine.gpus[static_cast<std::size_t>(devices[local].gpu)])) {
      return {BindMode::none,
              "auto: the NUMA node of local rank " + std::to_string(local) + "'s GPU is not known"};
    }
  }
  std::map<int, int> ranks_on;
  for (const Home& home : homes) ++ranks_on[home.node];
  for (const auto& [node, ranks] : ranks_on) {
    const auto cores = machine.cores_among(machine.node(node)->cpus).size();
    if (cores < static_cast<std::size_t>(ranks)) {
      return {BindMode::none, "auto: " + std::to_string(ranks) + " ranks would share NUMA node " +
                                  std::to_string(node) + "'s " + std::to_string(cores) + " cores"};
    }
  }
  return {BindMode::node, "auto: a GPU per rank, " + std::to_string(machine.cpu_nodes().size()) +
                              " NUMA nodes, the whole node: each rank on its GPU's NUMA node "
                              "(as --bind node)"};
}

}  // namespace

Result<Placement> place_ranks(const MachineLayout& machine, const PlacementRequest& request) {
  const int count = std::max(1, request.local_world_size);
  const std::vector<RankDevices> devices =
      rank_devices(machine, request.cuda_visible_devices, count, request.per_process);
  const std::vector<Home> homes = homes_of(machine, devices);
  Placement placement;
  placement.requested = request.mode;
  std::vector<RankPlacement> all(static_cast<std::size_t>(count));
  for (int local = 0; local < count; ++local) {
    RankPlacement& rank = all[static_cast<std::size_t>(local)];
    const RankDevices& d = devices[static_cast<std::size_t>(local)];
    rank.local_rank = local;
    rank.gpu_label = d.label;
    if (d.gpu >= 0) rank.gpu = machine.gpus[static_cast<std::size_t>(d.gpu)].address;
    if (d.nic >= 0) {
      rank.nic = machine.nics[static_cast<std::size_t>(d.nic)].name;
      rank.nic_port = machine.nics[static_cast<std::size_t>(d.nic)].port;
    }
    rank.nic_reason = d.nic_reason;
  }
  for (const Nic& nic : machine.nics) {
    placement.nics.push_back(nic.name + " (" + nic.address + ", NUMA " +
                             std::to_string(nic.numa_node) +
                             (nic.link_layer.empty() ? "" : ", " + nic.link_layer) + ")");
  }
  auto pick = [&](Placement& out) {
    for (int local : request.local_ranks) {
      if (local >= 0 && local < count) out.ranks.push_back(all[static_cast<std::size_t>(local)]);
    }
    return out;
  };

  const bool narrowed = machine.allowed_cpus != machine.granted_cpus;
  if (request.per_process && (narrowed || !request.scheduler_binding.empty())) {
    placement.applied = BindMode::none;
    placement.reason = "the scheduler already bound this task (CPUs " +
                       cpu_list_text(machine.allowed_cpus) + " of " +
                       cpu_list_text(machine.granted_cpus) +
                       (request.scheduler_binding.empty() ? "" : "; " + request.scheduler_binding) +
                       "): left as it is";
    return pick(placement);
  }
  BindMode mode = request.mode;
  const std::size_t entries = visible_device_entries(request.cuda_visible_devices).size();
  if (mode == BindMode::automatic && task_owns_devices(request.per_process, entries, count)) {
    // Each task has GPUs of its own (srun --gpus-per-task): the other tasks' are not known here,
    // so whether every rank has a GPU of its own cannot be.
    mode = BindMode::none;
    placement.reason =
        "auto: each task has its own CUDA_VISIBLE_DEVICES (the scheduler's GPUs a task), so the "
        "other tasks' GPUs are not known here; --bind node places this task by its GPU";
  } else if (mode == BindMode::automatic) {
    std::tie(mode, placement.reason) = resolve_auto(machine, devices, homes);
  } else {
    placement.reason = "--bind " + to_string(mode);
  }
  placement.applied = mode;
  if (mode == BindMode::none) return pick(placement);

  const CpuList& usable = machine.allowed_cpus;
  // Ranks that share a NUMA node, in local rank order: the shares of exclusive and
  // core-complex are handed out among them.
  std::map<int, std::vector<int>> on_node;
  for (int local = 0; local < count; ++local)
    on_node[homes[static_cast<std::size_t>(local)].node].push_back(local);

  for (int local = 0; local < count; ++local) {
    RankPlacement& rank = all[static_cast<std::size_t>(local)];
    const Home& home = homes[static_cast<std::size_t>(local)];
    const NumaNode& node = *machine.node(home.node);
    const std::vector<int>& peers = on_node[home.node];
    const auto turn =
        static_cast<std::size_t>(std::find(peers.begin(), peers.end(), local) - peers.begin());
    rank.numa_node = home.node;
    CpuList nodes{home.node};
    const CpuList node_cpus = intersect(node.cpus, usable);
    switch (mode) {
      case BindMode::node:
        rank.cpus = node_cpus;
        rank.why = home.why;
        break;
      case BindMode::socket: {
        const int socket = machine.cpu(node.cpus.front())->socket;
        rank.cpus = intersect(cpus_of_socket(machine, socket), usable);
        nodes.clear();
        for (const NumaNode& n : machine.nodes) {
          if (!n.cpus.empty() && machine.cpu(n.cpus.front())->socket == socket)
            nodes.push_back(n.id);
        }
        rank.why = "socket " + std::to_string(socket) + ", which holds " + home.why;
        break;
      }
      case BindMode::exclusive: {
        const auto cores = machine.cores_among(node_cpus);
        if (cores.size() < peers.size()) {
          std::string names;
          for (int p : peers) names += (names.empty() ? "" : ", ") + std::to_string(p);
          return invalid("--bind", "exclusive",
                         "a core for each rank: local ranks " + names + " belong to NUMA node " +
                             std::to_string(home.node) + ", which has " +
                             std::to_string(cores.size()) + " core(s) this launcher may use (" +
                             cpu_list_text(node_cpus) +
                             "); use --bind node, or fewer ranks per node");
        }
        const std::size_t begin = turn * cores.size() / peers.size();
        const std::size_t end = (turn + 1) * cores.size() / peers.size();
        rank.cpus = flatten(
            {cores.begin() + static_cast<long>(begin), cores.begin() + static_cast<long>(end)});
        rank.why = std::to_string(end - begin) + " of the " + std::to_string(cores.size()) +
                   " cores of " + home.why + ", whole cores, shared by no other rank";
        break;
      }
      case BindMode::core_complex: {
        std::map<int, CpuList> groups;  // L3 group → its usable CPUs on this node
        for (int id : node_cpus) {
          if (const CpuInfo* c = machine.cpu(id); c != nullptr && c->l3 >= 0)
            groups[c->l3].push_back(id);
        }
        if (groups.empty()) {
          rank.cpus = node_cpus;
          rank.why = home.why + " (the L3 caches are not described: the whole node)";
          break;
        }
        auto group = groups.begin();
        std::advance(group, static_cast<long>(turn % groups.size()));
        rank.cpus = group->second;
        rank.why =
            "L3 group " + std::to_string(turn % groups.size()) + " of " +
            std::to_string(groups.size()) + " in " + home.why +
            (peers.size() > groups.size() ? " (more ranks than L3 groups there: shared)" : "");
        break;
      }
      case BindMode::none:
      case BindMode::automatic:
        break;
    }
    if (rank.cpus.empty()) {
      rank.cpus = usable;
      rank.why +=
          "; none of those CPUs is among the ones this launcher may use, so the ones it "
          "may (" +
          cpu_list_text(usable) + ")";
    }
    rank.memory_nodes = intersect(nodes, machine.allowed_mems);
    rank.memory = rank.memory_nodes.empty() ? MemoryPolicy::none : request.memory;
    if (rank.memory == MemoryPolicy::none) rank.memory_nodes.clear();
  }
  // Threads: the cores a rank has, divided among the ranks that have the same ones.
  for (RankPlacement& rank : all) {
    int sharing = 0;
    for (const RankPlacement& other : all) {
      if (!intersect(rank.cpus, other.cpus).empty()) ++sharing;
    }
    const int cores = static_cast<int>(machine.cores_among(rank.cpus).size());
    rank.threads = std::max(1, cores / std::max(1, sharing));
  }
  return pick(placement);
}

}  // namespace aml
