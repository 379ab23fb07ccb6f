// Where a round's seats start from (DESIGN §5): what the round before left in its seats'
// record and its verdict, and, under etcd, who gives them: the first launcher to claim the
// round, once the round before has ended (node 0's store's host always does).
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "rendezvous/elastic_keys.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"
#include "rendezvous/round_answers.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;
using namespace elastic_keys;

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

// Its claim, the round before's end, and whether the round was closed already (a launcher
// waiting for its place there takes over only a claimant lost before it closed the round).
std::vector<BatchOp> NodeGroup::claim_look(int round) const {
  std::vector<BatchOp> look = {BatchOp::get_now(elastic_key(round, "coordinator"))};
  if (round > 0) {
    look.push_back(BatchOp::get_now("aml/" + phase_ + "/" + std::to_string(round - 1) + "/abort"));
    look.push_back(BatchOp::get_now(elastic_key(round, "counted")));
  }
  return look;
}

bool NodeGroup::claims(int round, const std::vector<std::optional<std::string>>& seen) {
  if (seen.empty() || (round > 0 && (seen.size() < 3 || !seen[1] || seen[2]))) return false;
  const std::string me = std::to_string(launcher_id_);
  // Its own claim, standing: it lost etcd (its lease alive) before it closed the round, and
  // came back; nobody else may take the round over, so it goes on giving its seats.
  if (seen[0]) return *seen[0] == me;
  auto claimed = control_->claim(elastic_key(round, "coordinator"), me);
  return claimed && *claimed == me;
}

// etcd: a round whose seats were given, their record written with its node 0's place (that round
// starts at once), but whose giver was lost before it wrote the others' places (or lost etcd,
// its lease alive, and came back). Seated again, the round would run twice (node 0 already runs
// it); the launcher that took over (or the giver back) writes the rest of the places as they
// were given, and closes the round at the count it finds. A place the
// record does not give (a spare, a benched node) is "late": its launcher counts in the next.
Result<Agreement> NodeGroup::complete_seating(int round, const std::string& record) {
  const auto parsed = nlohmann::json::parse(record, nullptr, false);
  const auto list =
      parsed.is_object() ? parsed.value("seats", nlohmann::json::array()) : nlohmann::json::array();
  const int restarts_used = parsed.is_object() ? parsed.value("restarts_used", 0) : 0;
  std::map<long, int> seats;
  for (const auto& seat : list) {
    if (seat.is_array() && seat.size() >= 2 && seat[0].is_number_integer() &&
        seat[1].is_number_integer()) {
      seats[seat[0].get<long>()] = seat[1].get<int>();
    }
  }
  const int nodes = static_cast<int>(seats.size());
  std::map<long, std::string> answers;
  for (const auto& [id, rank] : seats) {
    answers[id] =
        std::to_string(rank) + " " + std::to_string(nodes) + " " + std::to_string(restarts_used);
  }
  const std::string count_key = elastic_key(round, "count");
  auto count = control_->add(count_key, 0);
  if (!count) return count.error();
  auto places = answer_records(count_key, answers, kLateMark);
  places.emplace_back(elastic_key(round, "counted"), std::to_string(*count));
  auto next = control_->get(kNextRoundKey, milliseconds(0));
  if (!next) return next.error();
  if (!*next || std::atoi((*next)->c_str()) <= round)
    places.emplace_back(std::string(kNextRoundKey), std::to_string(round + 1));
  if (auto placed = control_->set_many(places); !placed) return placed.error();
  if (options_.say) {
    options_.say("aml-launch: " + options_.self.host + ": round " + std::to_string(round) +
                 "'s seats were given, but not told to all (their giver was lost, or lost " +
                 "etcd, before it told them): this node told the rest, as given\n");
  }
  const auto mine = seats.find(launcher_id_);
  if (mine == seats.end()) return take_seat(round + 1);
  return seated_at(round, mine->second, nodes, restarts_used);
}

}  // namespace aml
