#include "rendezvous/node_info.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

namespace aml {

std::string NodeInfo::describe() const {
  if (node_rank < 0) return "a node waiting for its seat (" + host + ")";
  if (per_process()) {
    return "rank " + std::to_string(node_rank) + " (node " + std::to_string(on_node) + ", " + host +
           ")";
  }
  return "node " + std::to_string(node_rank) + " (" + host + ")";
}

std::string to_json(const NodeInfo& info) {
  nlohmann::ordered_json j;
  j["node_rank"] = info.node_rank;
  j["host"] = info.host;
  j["addr"] = info.addr;
  j["pid"] = info.pid;
  j["nnodes"] = info.nnodes;
  j["nproc_per_node"] = info.nproc_per_node;
  j["run_id"] = info.run_id;
  j["version"] = info.version;
  j["max_restarts"] = info.max_restarts;
  j["tf_ports"] = info.tf_ports;
  j["on_node"] = info.on_node;
  if (!info.health.empty()) j["health"] = info.health;
  if (!info.machine.empty()) j["machine"] = info.machine;
  if (info.nic_gbps > 0) j["nic_gbps"] = info.nic_gbps;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::optional<NodeInfo> node_info_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    NodeInfo info;
    info.node_rank = j.at("node_rank").get<int>();
    info.host = j.at("host").get<std::string>();
    info.addr = j.at("addr").get<std::string>();
    info.pid = j.at("pid").get<long>();
    info.nnodes = j.at("nnodes").get<int>();
    info.nproc_per_node = j.at("nproc_per_node").get<int>();
    info.run_id = j.at("run_id").get<std::string>();
    info.version = j.at("version").get<std::string>();
    info.max_restarts = j.at("max_restarts").get<int>();
    info.tf_ports = j.at("tf_ports").get<std::vector<int>>();
    info.on_node = j.value("on_node", -1);
    info.health = j.value("health", std::string());
    info.machine = j.value("machine", std::string());
    info.nic_gbps = j.value("nic_gbps", 0.0);
    return info;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

namespace {

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

// One property every node must agree on: "" when they do, else who says what.
std::string compare(const std::vector<NodeInfo>& nodes, const std::string& what,
                    const std::function<std::string(const NodeInfo&)>& value) {
  std::map<std::string, std::vector<std::string>> by_value;
  for (const NodeInfo& node : nodes) by_value[value(node)].push_back(node.describe());
  if (by_value.size() <= 1) return {};
  std::vector<std::string> groups;
  for (const auto& [v, who] : by_value) {
    groups.push_back(joined(who) + (who.size() == 1 ? " has " : " have ") + v);
  }
  return "the nodes disagree on " + what + ": " + joined(groups);
}

}  // namespace

std::optional<std::string> disagreement(const std::vector<NodeInfo>& nodes) {
  auto number = [](int n) { return std::to_string(n); };
  auto quoted = [](const std::string& s) { return "\"" + s + "\""; };
  const std::pair<std::string, std::function<std::string(const NodeInfo&)>> properties[] = {
      {"the number of nodes", [&](const NodeInfo& n) { return number(n.nnodes); }},
      {"processes per node", [&](const NodeInfo& n) { return number(n.nproc_per_node); }},
      {"the run id", [&](const NodeInfo& n) { return quoted(n.run_id); }},
      {"the aml-launch version", [&](const NodeInfo& n) { return n.version; }},
      {"--max-restarts", [&](const NodeInfo& n) { return number(n.max_restarts); }},
  };
  std::vector<std::string> problems;
  for (const auto& [what, value] : properties) {
    std::string problem = compare(nodes, what, value);
    if (!problem.empty()) problems.push_back(problem);
  }
  if (problems.empty()) return std::nullopt;
  std::string text = problems.front();
  for (std::size_t i = 1; i < problems.size(); ++i) text += "; " + problems[i];
  return text;
}

std::optional<std::string> newcomer_disagreement(const NodeInfo& member, NodeInfo newcomer) {
  // Its node rank and the node count are the round's, given with its seat.
  newcomer.node_rank = -1;
  newcomer.nnodes = member.nnodes;
  return disagreement({member, newcomer});
}

std::string missing_node_ranks(int nnodes, const std::vector<int>& present) {
  std::vector<std::string> missing;
  for (int rank = 0; rank < nnodes; ++rank) {
    if (std::find(present.begin(), present.end(), rank) == present.end()) {
      missing.push_back(std::to_string(rank));
    }
  }
  return joined(missing);
}

std::string slower_ports(const std::vector<NodeInfo>& nodes) {
  double fastest = 0;
  for (const NodeInfo& node : nodes) fastest = std::max(fastest, node.nic_gbps);
  std::string text;
  int named = 0, more = 0;
  for (const NodeInfo& node : nodes) {
    if (node.nic_gbps <= 0 || node.nic_gbps >= fastest) continue;
    if (named++ >= 8) {
      ++more;
      continue;
    }
    char rate[32];
    std::snprintf(rate, sizeof rate, "%g", node.nic_gbps);
    text +=
        (text.empty() ? "" : ", ") + node.describe() + " at " + node.addr + ": " + rate + " Gb/s";
  }
  if (text.empty()) return "";
  if (more > 0) text += " and " + std::to_string(more) + " more";
  char best[32];
  std::snprintf(best, sizeof best, "%g", fastest);
  return text + " (the others' slowest port: " + best + " Gb/s)";
}

}  // namespace aml
