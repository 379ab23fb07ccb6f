// --straggler-check across nodes (DESIGN §6, supervisor/straggler_check.hpp): the clock offset
// to node 0's store's host over the link each launcher holds, each sample's calls through the
// store or etcd, and --bench-stragglers' record of the round's stragglers, which whoever gives
// the next round's seats benches.
#include <nlohmann/json.hpp>

#include "rendezvous/node_group.hpp"
#include "supervisor/failure_summary.hpp"
#include "util/wall_clock.hpp"

namespace aml {
// Cristian's way: the store's clock read between two of this node's; of three round trips the
// shortest brackets it best (its error is at most half of it).
std::optional<std::int64_t> NodeGroup::clock_offset_ns() {
  std::optional<std::int64_t> best;
  std::int64_t shortest = INT64_MAX;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t before = wall_clock_ns();
    auto theirs = control_->clock_ns();
    const std::int64_t after = wall_clock_ns();
    if (!theirs) return best;  // etcd: no clock to give
    if (after - before < shortest) {
      shortest = after - before;
      best = *theirs - (before + after) / 2;
    }
  }
  return best;
}

void NodeGroup::offer_calls(std::int64_t sample, const std::string& calls) {
  const int me = options_.self.node_rank;
  (void)control_->set(node_key("calls/" + std::to_string(sample), me), calls);
  // Two samples kept: the store does not fill up over a long job.
  (void)control_->erase(node_key("calls/" + std::to_string(sample - 2), me));
}

std::optional<std::vector<std::string>> NodeGroup::pooled_calls(std::int64_t sample,
                                                                bool last_chance) {
  const std::string name = "calls/" + std::to_string(sample);
  if (!last_chance) {
    auto all = all_exist(name);
    if (!all || !*all) return std::nullopt;
  }
  std::vector<std::string> out;
  for (const auto& keys : key_batches(name)) {
    auto values = control_->get_all(keys, std::chrono::milliseconds(0));
    if (!values) continue;
    for (const auto& value : *values) {
      if (value) out.push_back(*value);
    }
  }
  return out;
}

bool NodeGroup::bench_straggler(int node_rank, const std::string& why) {
  if (!options_.elastic || round_ < 0) return false;
  const std::string key = elastic_key(round_, "stragglers");
  auto now = control_->get(key, std::chrono::milliseconds(0));
  auto named = now && *now ? nlohmann::json::parse(**now, nullptr, false) : nlohmann::json();
  if (!named.is_object()) named = nlohmann::json::object();
  named[std::to_string(node_rank)] = {{"why", why},
                                      {"time", utc_timestamp(std::chrono::system_clock::now())}};
  return control_->set(key, named.dump()).ok();
}

// The last round's stragglers (only the deciding node writes them), benched as any other.
void NodeGroup::bench_stragglers(BenchBook& book, const LastRound& last, int round) const {
  if (round == 0) return;
  auto record = control_->get(elastic_key(round - 1, "stragglers"), std::chrono::milliseconds(0));
  if (!record || !*record) return;
  const auto named = nlohmann::json::parse(**record, nullptr, false);
  if (!named.is_object()) return;
  for (const auto& [id, rank] : last.seats) {
    const auto said = named.find(std::to_string(rank));
    if (said == named.end() || !said->is_object()) continue;
    BenchedNode node;
    node.launcher = id;
    if (auto known = last.who.find(id); known != last.who.end()) {
      node.host = known->second.host;
      node.addr = known->second.addr;
      node.machine = known->second.machine;
      node.pid = known->second.pid;
    }
    node.node_rank = rank;
    node.reason = "its rank was a straggler (--bench-stragglers)";
    node.figure = said->value("why", "");
    node.time = said->value("time", "");
    book.add(node, round);
  }
}

}  // namespace aml
