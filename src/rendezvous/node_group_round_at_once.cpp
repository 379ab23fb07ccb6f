// An elastic round after the first starts at once under etcd (DESIGN §5). Its members were
// given their seats a moment ago by whoever gave them (a newcomer that disagrees with the job
// was refused then), so node 0 does not wait for their entries before its verdict: it says it
// with its own entry, in one transaction, and a member's seat is its entry. A member's death
// from then on is heard on the tripwire at once (node_group_tripwire.cpp); a member whose lease
// ends leaves the "gone" key its look's will names, and node 0 looks for those keys of its
// members at each tick, ending the round with the first it finds. Entries first, then the
// verdict, were two steps of a thousand etcd transactions and a thousand events one after the
// other before any worker ran: the step that kept node 0's loss above 2 s at 1,024 nodes.
// A member's seat may come without its slot (decide_members): a launcher seated so is known
// alive by its lease alone, and where it is the round's node 0, its members' wait for the
// verdict ends with its "gone" key.
#include <nlohmann/json.hpp>

#include "rendezvous/elastic_keys.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"
#include "supervisor/job_failure.hpp"

namespace aml {

using namespace group_timing;
using namespace elastic_keys;

bool NodeGroup::starts_at_once(int round) const {
  // TensorFlow's workers need every node's ports: the entries first.
  return on_etcd() && options_.elastic && round > 0 && options_.self.tf_ports.empty();
}

// `entered`: node 0's entry transaction (its entry, will, the abort, its verdict, the seats).
Result<Agreement> NodeGroup::said_at_once(Agreement ready, const std::string& said,
                                          const std::vector<std::optional<std::string>>& entered) {
  if (entered.size() < 5 || entered[3] != said) {
    return invalid(
        "rendezvous", round_name(),
        "one verdict, this node 0's; another was written first: " + entered[3].value_or("none"));
  }
  // Its members as the seats' record names them (launcher number, host, launcher pid).
  const int nnodes = options_.self.nnodes;
  ready.nodes.resize(static_cast<std::size_t>(std::max(nnodes, 1)));
  auto record = nlohmann::json::parse(entered[4].value_or(""), nullptr, false);
  const auto seats =
      record.is_object() ? record.value("seats", nlohmann::json::array()) : nlohmann::json::array();
  for (const auto& seat : seats) {
    if (!seat.is_array() || seat.size() < 4 || !seat[0].is_number_integer() ||
        !seat[1].is_number_integer()) {
      continue;
    }
    const int rank = seat[1].get<int>();
    if (rank <= 0 || rank >= nnodes) continue;
    NodeInfo& member = ready.nodes[static_cast<std::size_t>(rank)];
    member.node_rank = rank;
    member.host = seat[2].is_string() ? seat[2].get<std::string>() : "";
    member.pid = seat[3].is_number_integer() ? seat[3].get<long>() : 0;
    if (seat.size() >= 5 && seat[4].is_string()) {
      member.addr = seat[4].get<std::string>();
      if (options_.serve_workers_store) options_.admitted->add(member.addr);
    }
    seated_ids_[seat[0].get<long>()] = rank;
  }
  if (record.is_object() && record.contains("bench"))
    ready.bench = bench_from_json(record["bench"]);
  return ready;
}

// Node 0, at each tick of a round started at once: a member whose lease ended is lost, unless
// its workers had all finished well (it said "done"): from there its going costs the job
// nothing, whether killed or gone with the job's end (find_silent_node's rule too).
std::optional<JobFailure> NodeGroup::gone_member() {
  if (seated_ids_.empty()) return std::nullopt;
  std::vector<long> ids;
  for (const auto& [id, rank] : seated_ids_) ids.push_back(id);
  auto gone = gone_among(ids);
  if (!gone || gone->empty()) return std::nullopt;  // etcd busy: the next tick looks again
  std::optional<int> lost_rank;
  for (long id : *gone) {
    const int rank = seated_ids_[id];
    auto done = said_done(rank);
    if (!done) return std::nullopt;  // etcd busy: the next tick looks again
    if (!*done) {
      lost_rank = rank;
      break;
    }
    seated_ids_.erase(id);
  }
  if (!lost_rank) return std::nullopt;
  const int rank = *lost_rank;
  seated_ids_.clear();
  const std::string lease_ended = lease_ended_text();
  // One seated without counting in again that never came (lost with the round before, its
  // lease still running then): the round forms again without it, and no restart is used.
  if (!came_to_round(rank)) {
    JobFailure never_came =
        lost_node(rank, lease_ended + ", before it came to round " + std::to_string(round_));
    never_came.regroup = true;
    return stored_failure_or(never_came);
  }
  return stored_failure_or(lost_node(rank, lease_ended));
}

// Node 0 says its verdict as soon as it has its seat. It may leave the round first (seated
// failing its health check, it ends the round as one ended to regroup, and waits benched): the
// round's abort says so, looked at every kGoneRecheck, and this node goes on to the next round.
// Its lease's end without a verdict (seen from its "gone" key, after --node-timeout of the wait)
// ends the round as its loss. While its lease lives the wait goes on, said every so often, up to
// --rdzv-timeout and --node-timeout.
Result<std::optional<std::string>> NodeGroup::node0_verdict(RendezvousClient& from) {
  const auto begun = Clock::now();
  const auto deadline = begun + options_.rdzv_timeout + options_.node_timeout;
  std::optional<long> node0;  // its launcher number, from the round's seats' record
  std::string host;
  for (;;) {
    const auto step = std::min<Clock::duration>(std::min(kGoneRecheck, options_.node_timeout),
                                                deadline - Clock::now());
    const auto asked = Clock::now();
    auto verdict = from.get(key("verdict"), std::chrono::duration_cast<milliseconds>(step));
    if (!verdict && etcd_in_grace(asked)) continue;
    if (!verdict) return verdict.error();
    if (*verdict || Clock::now() >= deadline) return std::move(*verdict);
    auto ended = control_->get(key("abort"), milliseconds(0));
    if (!ended && etcd_in_grace(asked)) continue;
    if (!ended) return ended.error();
    if (*ended) {
      const auto why = job_failure_from_json(**ended);
      if (options_.say) {
        // Named as the round's end names it: node 0 itself (its loss, found first by another
        // member), or what ended the round before node 0 came.
        options_.say("aml-launch: " + options_.self.host + ": round " + std::to_string(round_) +
                     "'s node 0 did not say its verdict; the round ended: " +
                     (why ? why->describe() : std::string("(unread)")) +
                     "; this node goes on to round " + std::to_string(round_ + 1) + "\n");
      }
      return std::optional<std::string>();
    }
    // Its lease cannot end before --node-timeout of silence: not looked for sooner.
    if (Clock::now() - begun < options_.node_timeout) continue;
    if (!node0) {
      // The seats' record of this round, read as the round after it reads it.
      const LastRound seated = last_round(round_ + 1);
      for (const auto& [id, rank] : seated.seats) {
        if (rank != 0) continue;
        node0 = id;
        const auto known = seated.who.find(id);
        host = known != seated.who.end() ? known->second.host : "";
      }
      if (!node0) continue;
    }
    auto gone = gone_among({*node0});
    if (!gone || gone->empty()) {
      // Its lease lives: it is on its way (back from etcd out of its reach, or slow). Said, so
      // that a long wait is never a silent one.
      say_progress("round " + std::to_string(round_) + " waits for its node 0 (" +
                       (host.empty() ? "?" : host) + ", launcher " + std::to_string(*node0) +
                       ") to say the round's verdict; its etcd lease lives",
                   deadline,
                   "--rdzv-timeout " + seconds_text(options_.rdzv_timeout) + " + --node-timeout " +
                       seconds_text(options_.node_timeout));
      continue;
    }
    const std::string why = "its etcd lease ended before it said round " + std::to_string(round_) +
                            "'s verdict: it died, or was silent or " +
                            "cut off for --node-timeout " + seconds_text(options_.node_timeout);
    JobFailure lost = lost_node(0, why);
    lost.node_rank = 0;
    lost.host = host;
    lost.regroup = true;  // it never came: no restart used
    (void)stored_failure_or(lost);
    if (options_.say) {
      options_.say("aml-launch: " + options_.self.host + ": round " + std::to_string(round_) +
                   "'s node 0 (" + host + ", launcher " + std::to_string(*node0) + ") was lost: " +
                   why + "; this node goes on to round " + std::to_string(round_ + 1) + "\n");
    }
    return std::optional<std::string>();
  }
}

}  // namespace aml
