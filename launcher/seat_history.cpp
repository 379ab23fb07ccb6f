#include "seat_history.hpp"

namespace aml {
namespace {

// A launcher: started again on its machine it is another (its pid, maybe its address).
std::string launcher_of(const NodeInfo& node) {
  return node.host + "\n" + std::to_string(node.pid) + "\n" + node.addr;
}

// A machine: the scheduler's name for it where there is one, else its host name and address (a
// VM replaced under the same name, a pod started again elsewhere, comes with another address:
// a new machine; so do a test's network namespaces, which share one host name).
std::string machine_of(const NodeInfo& node) {
  return node.machine.empty() ? node.host + " " + node.addr : node.machine;
}

}  // namespace

std::vector<SeatNews> SeatHistory::seated(int round, const std::vector<NodeInfo>& nodes,
                                          int self_node_rank) {
  std::vector<SeatNews> news;
  // A launcher that first gives the seats of a later round (under etcd whoever claims the
  // round; a node 0 come back) knows nobody's past: it learns them, and says nothing yet.
  const bool knows_the_past = round == 0 || !last_round_.empty();
  // Each machine's last round before this one: launchers sharing a machine (a test's, or a
  // per-process launch) are each new in the round they come together.
  const std::map<std::string, int> before = last_round_;
  for (const NodeInfo& node : nodes) {
    const auto [launcher, first_seat] = rank_of_.try_emplace(launcher_of(node), node.node_rank);
    const bool known = !first_seat;
    const int rank_before = launcher->second;
    launcher->second = node.node_rank;
    const std::string machine = machine_of(node);
    last_round_[machine] = round;
    const auto last = before.find(machine);
    const bool seated_before = last != before.end();
    const int away = seated_before ? round - last->second - 1 : 0;  // rounds it sat out
    // Seated in the round before too, under the same rank: nothing new.
    const bool moved = known && away == 0 && rank_before != node.node_rank;
    if (!knows_the_past || node.node_rank == self_node_rank || (known && away == 0 && !moved)) {
      continue;
    }
    nlohmann::ordered_json details{
        {"node_rank", node.node_rank},
        {"host", node.host},
        {"addr", node.addr},
        {"machine", node.machine.empty() ? nlohmann::ordered_json(nullptr)
                                         : nlohmann::ordered_json(node.machine)},
        {"pid", node.pid}};
    if (moved) {
      // The report files its later lines under the rank it holds now, not its old one.
      details["from_node_rank"] = rank_before;
      news.push_back({"node_moved", std::move(details)});
    } else if (!seated_before) {
      news.push_back({"node_joined", std::move(details)});
    } else {
      details["rounds_away"] = away;
      news.push_back({"node_returned", std::move(details)});
    }
  }
  return news;
}

}  // namespace aml
