#include "rendezvous/bench.hpp"

#include <algorithm>
#include <set>

namespace aml {

nlohmann::ordered_json bench_json(const BenchedNode& node) {
  return {{"launcher", node.launcher}, {"pid", node.pid},         {"host", node.host},
          {"addr", node.addr},         {"machine", node.machine}, {"node_rank", node.node_rank},
          {"reason", node.reason},     {"figure", node.figure},   {"time", node.time},
          {"round", node.round}};
}

std::optional<BenchedNode> benched_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  BenchedNode node;
  node.launcher = j.value("launcher", -1L);
  node.host = j.value("host", std::string());
  node.addr = j.value("addr", std::string());
  node.machine = j.value("machine", std::string());
  node.node_rank = j.value("node_rank", -1);
  node.reason = j.value("reason", std::string());
  node.figure = j.value("figure", std::string());
  node.time = j.value("time", std::string());
  node.round = j.value("round", 0);
  node.pid = j.value("pid", 0L);
  return node;
}

std::vector<BenchedNode> bench_from_json(const nlohmann::json& list) {
  std::vector<BenchedNode> bench;
  if (!list.is_array()) return bench;
  for (const auto& entry : list) {
    try {
      if (auto node = benched_from_json(entry)) bench.push_back(*node);
    } catch (const nlohmann::json::exception&) {
    }
  }
  return bench;
}

bool same_node(const BenchedNode& benched, long launcher, const std::string& addr,
               const std::string& machine) {
  if (launcher >= 0 && benched.launcher == launcher) return true;
  if (!machine.empty() || !benched.machine.empty()) return machine == benched.machine;
  const bool loopback = addr.empty() || addr.starts_with("127.") || addr == "::1";
  return !loopback && addr == benched.addr;
}

std::string bench_text(const std::vector<BenchedNode>& bench) {
  if (bench.empty()) return "";
  std::string text =
      "aml-launch: benched (held no rank since, in this job): " + std::to_string(bench.size()) +
      " node" + (bench.size() == 1 ? "" : "s") + "\n";
  std::set<std::string> hosts, machines;
  for (const BenchedNode& node : bench) {
    text += "aml-launch:   " + node.host + " (" + node.addr +
            (node.machine.empty() ? "" : ", " + node.machine) +
            (node.node_rank >= 0 ? ", node rank " + std::to_string(node.node_rank) : "") +
            "): " + node.reason + (node.figure.empty() ? "" : ": " + node.figure) + ", at " +
            node.time + "\n";
    hosts.insert(node.host);
    if (!node.machine.empty()) machines.insert(node.machine);
  }
  auto joined = [](const std::set<std::string>& names) {
    std::string out;
    for (const std::string& name : names) out += (out.empty() ? "" : ",") + name;
    return out;
  };
  text += "aml-launch:   to keep them out of the next job: Slurm: srun --exclude=" +
          joined(machines.empty() ? hosts : machines) +
          "; Kubernetes: kubectl taint nodes NODE aml-launch/benched=true:NoSchedule for each "
          "node name (NODE_NAME from the downward API); Azure ML / Batch: the nodes' "
          "AZ_BATCH_NODE_ID" +
          (machines.empty() ? "" : " (" + joined(machines) + ")") + "\n";
  return text;
}

}  // namespace aml

namespace aml {

const BenchedNode* BenchBook::find(long launcher, const std::string& addr,
                                   const std::string& machine) const {
  for (const BenchedNode& node : bench) {
    if (same_node(node, launcher, addr, machine)) return &node;
  }
  return nullptr;
}

void BenchBook::add(BenchedNode node, int round) {
  node.round = round;
  const auto same = [&node](const BenchedNode& other) { return other.launcher == node.launcher; };
  if (std::any_of(added.begin(), added.end(), same)) return;  // one reason a round
  const auto known = std::find_if(bench.begin(), bench.end(), same);
  if (known == bench.end()) {
    bench.push_back(node);
  } else if (seated_last.contains(node.launcher)) {
    *known = node;
  } else {
    return;
  }
  added.push_back(node);
}

}  // namespace aml
