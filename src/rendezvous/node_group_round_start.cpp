// Where a round's seats start from (DESIGN §5): what the round before left in its seats'
// record and its verdict, and, under etcd, who gives them: the first launcher to claim the
// round, once the round before has ended (node 0's store's host always does).
#include <nlohmann/json.hpp>

#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;

// Before a round's seats: how the round before ended, from its seats' record (written by
// whoever gave them). A failure uses a restart; a lost launcher is not waited for.
NodeGroup::LastRound NodeGroup::last_round(int round) {
  LastRound last;
  if (round == 0) return last;
  auto record = control_->get(elastic_key(round - 1, "seats"), milliseconds(0));
  if (record && *record) {
    auto parsed = nlohmann::json::parse(**record, nullptr, false);
    if (parsed.is_object()) {
      last.restarts_used = parsed.value("restarts_used", 0);
      if (parsed.contains("bench")) last.bench = bench_from_json(parsed["bench"]);
      const auto first_failures = parsed.value("first_failures", nlohmann::json::object());
      for (const auto& [id, count] : first_failures.items()) {
        if (count.is_number_integer())
          last.first_failures[std::atol(id.c_str())] = count.get<int>();
      }
      for (const auto& seat : parsed.value("seats", nlohmann::json::array())) {
        if (!seat.is_array() || seat.size() < 2 || !seat[0].is_number_integer() ||
            !seat[1].is_number_integer()) {
          continue;
        }
        const long id = seat[0].get<long>();
        last.seats[id] = seat[1].get<int>();
        if (seat.size() >= 4 && seat[2].is_string() && seat[3].is_number_integer()) {
          auto text_at = [&seat](std::size_t i) {
            return seat.size() > i && seat[i].is_string() ? seat[i].get<std::string>()
                                                          : std::string();
          };
          last.who[id] = {seat[2].get<std::string>(), seat[3].get<long>(), text_at(4), text_at(5)};
        }
      }
    }
  }
  auto stored =
      control_->get("aml/" + phase_ + "/" + std::to_string(round - 1) + "/abort", milliseconds(0));
  if (!stored || !*stored || **stored == kComplete) return last;
  auto failure = job_failure_from_json(**stored);
  if (failure && !failure->regroup) ++last.restarts_used;
  if (!failure) return last;
  last.failure = failure;
  for (const auto& [id, rank] : last.seats) {
    if (rank == failure->member_or_node()) last.failed = id;
  }
  if (failure->launcher_lost()) last.lost = last.failed;
  return last;
}

// Under etcd no launcher is node 0 for good: the first to claim a round gives its seats. Not
// before the round ahead of it has ended (its members would be missing), and not while its
// claimant lives (the claim goes with its lease: a waiting launcher takes over). When a round
// ends, all its members look at once: its first node ranks claim the next one at once, the
// others at their next look (a thousand claims of one key would be a thousand raft rounds).
bool NodeGroup::coordinates(int round, bool first_look) {
  if (!may_claim(first_look) || !launcher_number()) return false;
  auto seen = control_->batch(claim_look(round));
  return seen && claims(round, *seen);
}

bool NodeGroup::may_claim(bool first_look) const {
  return on_etcd() && !(first_look && round_ >= 0 && options_.self.node_rank > kLastPromptRank);
}

std::vector<BatchOp> NodeGroup::claim_look(int round) const {
  std::vector<BatchOp> look = {BatchOp::get_now(elastic_key(round, "coordinator"))};
  if (round > 0) {
    look.push_back(BatchOp::get_now("aml/" + phase_ + "/" + std::to_string(round - 1) + "/abort"));
  }
  return look;
}

bool NodeGroup::claims(int round, const std::vector<std::optional<std::string>>& seen) {
  if (seen.empty() || seen[0] || (round > 0 && (seen.size() < 2 || !seen[1]))) return false;
  const std::string me = std::to_string(launcher_id_);
  auto claimed = control_->claim(elastic_key(round, "coordinator"), me);
  return claimed && *claimed == me;
}

}  // namespace aml
