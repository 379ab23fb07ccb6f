#include "placement/machine_layout.hpp"

#include <limits.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "placement/sys_reader.hpp"

namespace aml {

namespace {

// The CPU `id` in a list sorted by id; nullptr when it is not there.
template <typename Cpus>
auto find_cpu(Cpus& cpus, int id) -> decltype(&cpus.front()) {
  auto it = std::lower_bound(cpus.begin(), cpus.end(), id,
                             [](const CpuInfo& c, int value) { return c.id < value; });
  return it != cpus.end() && it->id == id ? &*it : nullptr;
}

}  // namespace

const CpuInfo* MachineLayout::cpu(int id) const { return find_cpu(cpus, id); }

const NumaNode* MachineLayout::node(int id) const {
  for (const NumaNode& n : nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

CpuList MachineLayout::online_cpus() const {
  CpuList out;
  for (const CpuInfo& c : cpus) out.push_back(c.id);
  return out;
}

CpuList MachineLayout::cpu_nodes() const {
  CpuList out;
  for (const NumaNode& n : nodes) {
    if (!n.cpus.empty()) out.push_back(n.id);
  }
  return out;
}

std::optional<int> MachineLayout::cpu_node_of(const PciDevice& device) const {
  if (const NumaNode* own = node(device.numa_node)) {
    if (!own->cpus.empty()) return own->id;
    // A memory-only node: the CPU node nearest to it.
    std::optional<int> nearest;
    int best = INT_MAX;
    for (const NumaNode& n : nodes) {
      if (n.cpus.empty() || static_cast<std::size_t>(n.id) >= own->distance.size()) continue;
      if (own->distance[static_cast<std::size_t>(n.id)] < best) {
        best = own->distance[static_cast<std::size_t>(n.id)];
        nearest = n.id;
      }
    }
    if (nearest) return nearest;
  }
  if (!device.local_cpus.empty()) {
    for (const NumaNode& n : nodes) {
      if (!n.cpus.empty() && contains_all(n.cpus, device.local_cpus)) return n.id;
    }
  }
  const CpuList with_cpus = cpu_nodes();
  if (with_cpus.size() == 1) return with_cpus.front();  // nothing else it could be near
  return std::nullopt;
}

std::vector<CpuList> MachineLayout::cores_among(const CpuList& among) const {
  std::map<std::pair<int, int>, CpuList> by_core;  // (socket, core) → its threads
  for (int id : among) {
    if (const CpuInfo* c = cpu(id)) by_core[{c->socket, c->core}].push_back(id);
  }
  std::vector<CpuList> cores;
  for (auto& [key, threads] : by_core) cores.push_back(std::move(threads));
  std::sort(cores.begin(), cores.end());
  return cores;
}

namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// `link` leads to the device's directory under /sys/devices.
void read_device(const SysReader& sys, const std::string& link, PciDevice& device) {
  device.path = sys.resolved(link);
  const std::string& dir = device.path;
  device.address = base_name(device.path);
  device.numa_node = sys.number(dir + "/numa_node", -1);
  // Asked only where the firmware gives no node (single-socket boxes, some VMs).
  if (device.numa_node < 0)
    device.local_cpus = sys.list(dir + "/local_cpulist").value_or(CpuList{});
}

// The CPUs: each one's socket, core and L3 group, reading one list per group, not per CPU.
Result<std::vector<CpuInfo>> read_cpus(const SysReader& sys) {
  const std::string base = "/sys/devices/system/cpu";
  auto online = sys.list(base + "/online");
  if (!online || online->empty()) {
    return invalid("machine layout", sys.at(base + "/online"), "a readable list of online CPUs");
  }
  std::vector<CpuInfo> cpus;
  for (int id : *online) cpus.push_back({id, 0, id, -1});
  std::set<int> core_known, socket_known, l3_known;
  // Without hyper-threads (most GPU VMs) every CPU is a core of its own: no list per CPU.
  const bool smt = sys.text(base + "/smt/active").value_or("1") != "0";
  std::string l3_index;  // the cache/indexN that is level 3, found on the first CPU
  for (const CpuInfo& first : std::vector<CpuInfo>(cpus)) {
    const std::string dir = base + "/cpu" + std::to_string(first.id);
    if (!socket_known.contains(first.id)) {
      auto package = sys.list(dir + "/topology/package_cpus_list");
      if (!package) package = sys.list(dir + "/topology/core_siblings_list");
      const int socket = sys.number(dir + "/topology/physical_package_id", 0);
      for (int id : package.value_or(CpuList{first.id})) {
        if (CpuInfo* c = find_cpu(cpus, id)) c->socket = socket;
        socket_known.insert(id);
      }
    }
    if (!core_known.contains(first.id) && smt) {
      auto siblings = sys.list(dir + "/topology/thread_siblings_list");
      for (int id : siblings.value_or(CpuList{first.id})) {
        if (CpuInfo* c = find_cpu(cpus, id)) c->core = first.id;
        core_known.insert(id);
      }
    }
    if (!l3_known.contains(first.id)) {
      if (l3_index.empty()) {
        for (const std::string& index : sys.entries(dir + "/cache")) {
          if (index.starts_with("index") &&
              sys.number(dir + "/cache/" + index + "/level", 0) == 3) {
            l3_index = index;
          }
        }
        if (l3_index.empty()) l3_index = "none";
      }
      if (l3_index == "none") continue;
      auto shared = sys.list(dir + "/cache/" + l3_index + "/shared_cpu_list");
      for (int id : shared.value_or(CpuList{})) {
        if (CpuInfo* c = find_cpu(cpus, id)) c->l3 = first.id;
        l3_known.insert(id);
      }
    }
  }
  return cpus;
}

std::vector<NumaNode> read_nodes(const SysReader& sys, const CpuList& online) {
  const std::string base = "/sys/devices/system/node";
  auto ids = sys.list(base + "/online");
  std::vector<NumaNode> nodes;
  if (!ids || ids->empty()) {
    nodes.push_back({0, online, {10}});  // a kernel without NUMA: one node of every CPU
    return nodes;
  }
  for (int id : *ids) {
    const std::string dir = base + "/node" + std::to_string(id);
    NumaNode node{id, intersect(sys.list(dir + "/cpulist").value_or(CpuList{}), online), {}};
    if (auto distance = sys.text(dir + "/distance")) {
      std::size_t start = 0;
      while (start < distance->size()) {
        auto space = distance->find(' ', start);
        if (space == std::string::npos) space = distance->size();
        if (space > start)
          node.distance.push_back(std::atoi(distance->substr(start, space - start).c_str()));
        start = space + 1;
      }
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

constexpr int kNvidiaVendor = 0x10de;

std::vector<Gpu> read_gpus(const SysReader& sys) {
  std::vector<Gpu> gpus;
  const std::string base = "/sys/bus/pci/devices";
  for (const std::string& address : sys.entries(base)) {
    const std::string dir = base + "/" + address;
    if (sys.number(dir + "/vendor", 0) != kNvidiaVendor) continue;
    const int device_class = sys.number(dir + "/class", 0) >> 8;
    if (device_class != 0x0300 && device_class != 0x0302) continue;  // VGA or 3D controller
    Gpu gpu;
    read_device(sys, dir, gpu);
    if (gpu.address.empty()) gpu.address = address;
    if (auto info = sys.text("/proc/driver/nvidia/gpus/" + address + "/information")) {
      const auto at = info->find("GPU UUID:");
      if (at != std::string::npos) {
        auto start = info->find_first_not_of(" \t", at + 9);
        auto end = info->find('\n', start);
        if (start != std::string::npos) gpu.uuid = info->substr(start, end - start);
      }
    }
    gpus.push_back(std::move(gpu));
  }
  // PCI order (domain, bus, device, function): the addresses sort so.
  std::sort(gpus.begin(), gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.address < b.address; });
  return gpus;
}

std::vector<Nic> read_nics(const SysReader& sys) {
  std::vector<Nic> nics;
  const std::string base = "/sys/class/infiniband";
  for (const std::string& name : sys.entries(base)) {
    Nic nic;
    nic.name = name;
    // /sys/class/infiniband/NAME is itself a link into the PCI tree on a real machine.
    read_device(sys, sys.resolved(base + "/" + name) + "/device", nic);
    // Port 1 nearly always; the list only where it is not.
    auto link_layer = sys.text(base + "/" + name + "/ports/1/link_layer");
    if (!link_layer) {
      const auto ports = sys.entries(base + "/" + name + "/ports");
      if (!ports.empty()) nic.port = std::atoi(ports.front().c_str());
      link_layer =
          sys.text(base + "/" + name + "/ports/" + std::to_string(nic.port) + "/link_layer");
    }
    nic.link_layer = link_layer.value_or("");
    nics.push_back(std::move(nic));
  }
  return nics;
}

// "Cpus_allowed_list:\t0-3" from a status file.
std::optional<CpuList> status_list(const std::string& status, const std::string& field) {
  const auto at = status.find(field + ":");
  if (at == std::string::npos) return std::nullopt;
  const auto start = status.find_first_not_of(" \t", at + field.size() + 1);
  const auto end = status.find('\n', start);
  return parse_cpu_list(status.substr(start, end == std::string::npos ? end : end - start));
}

CpuList own_affinity() {
  CpuList cpus;
  for (int size = 1024; size <= 65536; size *= 4) {
    cpu_set_t* set = CPU_ALLOC(size);
    const std::size_t bytes = CPU_ALLOC_SIZE(size);
    if (sched_getaffinity(0, bytes, set) == 0) {
      for (int cpu = 0; cpu < size; ++cpu) {
        if (CPU_ISSET_S(cpu, bytes, set)) cpus.push_back(cpu);
      }
      CPU_FREE(set);
      return cpus;
    }
    CPU_FREE(set);
  }
  return cpus;
}

// The cgroup v2 cpuset this process lives in (a container's share of the machine).
std::optional<CpuList> cgroup_cpus(const SysReader& sys) {
  auto cgroup = sys.text("/proc/self/cgroup");
  if (!cgroup || !cgroup->starts_with("0::"))
    return sys.list("/sys/fs/cgroup/cpuset.cpus.effective");
  std::string path = cgroup->substr(3);
  path = path.substr(0, path.find('\n'));
  if (path == "/") path.clear();
  return sys.list("/sys/fs/cgroup" + path + "/cpuset.cpus.effective");
}

}  // namespace

bool one_node_without_rdma(const std::string& root) {
  const SysReader sys(root);
  const auto nodes = sys.list("/sys/devices/system/node/online");
  return (!nodes || nodes->size() <= 1) && sys.entries("/sys/class/infiniband").empty();
}

Result<MachineLayout> read_machine_layout(const std::string& root) {
  const SysReader sys(root);
  MachineLayout machine;
  machine.source = root;
  auto cpus = read_cpus(sys);
  if (!cpus) return cpus.error();
  machine.cpus = std::move(*cpus);
  const CpuList online = machine.online_cpus();
  machine.nodes = read_nodes(sys, online);
  machine.gpus = read_gpus(sys);
  machine.nics = read_nics(sys);
  CpuList all_nodes;
  for (const NumaNode& n : machine.nodes) all_nodes.push_back(n.id);
  const auto status = sys.text("/proc/self/status");
  if (root == "/") {
    machine.allowed_cpus = intersect(own_affinity(), online);
  } else {
    // A test's root says what its launcher was given, else it was given everything.
    machine.allowed_cpus = intersect(
        status ? status_list(*status, "Cpus_allowed_list").value_or(online) : online, online);
  }
  machine.allowed_mems =
      status ? status_list(*status, "Mems_allowed_list").value_or(all_nodes) : all_nodes;
  machine.granted_cpus = intersect(cgroup_cpus(sys).value_or(online), online);
  if (machine.granted_cpus.empty()) machine.granted_cpus = online;
  return machine;
}

}  // namespace aml
