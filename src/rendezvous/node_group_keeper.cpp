// Node 0's store's host sitting a round out (DESIGN §5): under node 0's store, the launcher at
// the endpoint serves the rendezvous for the whole job, so a host that fails its health check
// (or is benched) holds no rank but keeps the store up. The round's node 0 is then another
// launcher: it leads the round and serves its workers a store of their own, as under etcd. The
// host meanwhile watches the round as node 0 would have: a silent member (the round's node 0
// included, whose silence no member would see) is named lost; and when the round ends it
// gives the next one's seats, or ends with the job.
#include <nlohmann/json.hpp>

#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"

namespace aml {

using std::chrono::milliseconds;

void NodeGroup::read_own_checks() {
  if (!options_.health || !options_.health->active()) return;
  const HealthReport report = options_.health->verdict();
  options_.self.health = report.failure();
  options_.self.nic_gbps = report.slowest_gbps();
}

void NodeGroup::read_own_checks_if_stale() {
  if (!options_.health || !options_.health->active()) return;
  if (Clock::now() - options_.health->looked_at() < group_timing::kChecksFresh) return;
  read_own_checks();
}

// The freezes said so far this round (node_group_notices.cpp), read without a watch: the host
// gives a member that said it will pause the pause too.
void NodeGroup::read_notices() {
  if (!options_.watch_notices) return;
  for (;;) {
    auto said = control_->get(notice_key(next_notice_), milliseconds(0));
    if (!said || !*said) return;
    ++next_notice_;
    auto parsed = nlohmann::json::parse(**said, nullptr, false);
    if (parsed.is_discarded()) continue;
    if (auto notice = notice_from_json(parsed); notice && notice->kind == NoticeKind::freeze) {
      allow_freeze(*notice);
    }
  }
}

Result<Agreement> NodeGroup::keep_store_through(int round, const std::map<long, int>& seats,
                                                const std::map<long, SeatedLauncher>& who,
                                                const std::string& why) {
  waits_benched(why,
                "keeps serving the job's rendezvous (node 0's store) and gives the rounds' "
                "seats");
  // The round as its members run it: its keys, its members by node rank (for naming a loss).
  round_ = round;
  phase_ = joining_phase_;
  options_.self.node_rank = -1;
  options_.self.nnodes = static_cast<int>(seats.size());
  agreement_ = Agreement{};
  agreement_.round = round;
  agreement_.node_count = options_.self.nnodes;
  agreement_.nodes.resize(seats.size());
  std::vector<long> members;
  for (const auto& [id, rank] : seats) {
    NodeInfo& node = agreement_.nodes[static_cast<std::size_t>(rank)];
    node.node_rank = rank;
    if (auto known = who.find(id); known != who.end()) {
      node.host = known->second.host;
      node.addr = known->second.addr;
      node.pid = known->second.pid;
      node.machine = known->second.machine;
    }
    members.push_back(id);
  }
  next_notice_ = 0;
  freezes_.clear();
  agreed_at_ = Clock::now();
  for (;;) {
    // The round ended: a failure, a regroup, or the job's completion (the next round's seats
    // then wait for a member to ask, and end with the job's end).
    auto ended = control_->get(key("abort"), beat_interval());
    if (!ended) return ended.error();  // its own store: should not be
    if (*ended) break;
    // It never formed: its members stop with the reason (a verdict with an error), and so
    // does this launcher.
    auto verdict = control_->get(key("verdict"), milliseconds(0));
    if (!verdict) return verdict.error();
    if (*verdict) {
      auto said = nlohmann::json::parse(**verdict, nullptr, false);
      const std::string error = said.is_object() ? said.value("error", std::string()) : "";
      if (!error.empty()) return invalid("rendezvous", round_name(), error);
    }
    // Its members all gone without a word (killed together): the next round's seats, from
    // whoever is left.
    auto gone = gone_among(members);
    if (!gone) return gone.error();
    if (gone->size() == members.size()) break;
    read_notices();
    (void)find_silent_node();  // a silent member's loss is the round's abort
  }
  read_own_checks();  // this node's checks at the next round, as every other node's
  return decide_members(round + 1);
}

}  // namespace aml
