// Who of the job's launchers is gone (DESIGN §5). A launcher that dies while it waits leaves
// its "gone" key, and one that dies in a round leaves the round's abort: its last wills. Under
// etcd a will is set by the few launchers watching the wills when its lease ends, and a lease
// that ends while nobody watches (every watcher paused, cut off, or come back under a new lease
// with a new watch; no round running) leaves neither. Its launcher would then be seated again
// and never come, or the round it ran would never end, with every other launcher waiting for
// it. So who waits on a launcher also asks etcd whether its lease still holds its wills, and
// sets what they would have set.
#include "rendezvous/elastic_keys.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;
using namespace elastic_keys;

// Which of these launchers left their "gone" key, or (etcd) hold no lease any more.
Result<std::vector<long>> NodeGroup::gone_among(const std::vector<long>& ids) {
  std::vector<long> gone, unmarked;
  for (std::size_t first = 0; first < ids.size(); first += kKeysPerCall) {
    std::vector<std::string> keys;
    for (std::size_t i = first; i < ids.size() && keys.size() < kKeysPerCall; ++i) {
      keys.push_back(gone_key(ids[i]));
    }
    auto dead = control_->get_all(keys, milliseconds(0));
    if (!dead) return dead.error();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ((*dead)[i] ? gone : unmarked).push_back(ids[first + i]);
    }
  }
  // Its wills' keys are counted, not watched: not at every look of a thousand launchers.
  const auto now = Clock::now();
  if (!on_etcd() || unmarked.empty() || now < next_lapse_look_) return gone;
  next_lapse_look_ = now + kLapseLook;
  auto lapsed = control_->lapsed(unmarked);
  if (!lapsed) return lapsed.error();
  for (long id : *lapsed) {
    // Its will, set late: whoever looks next finds the key, as if a watcher had set it.
    (void)control_->compare_set(gone_key(id), "", "1");
    gone.push_back(id);
  }
  return gone;
}

// etcd: a launcher waiting for `round` (a spare, a benched node) while the round before runs.
// A member of that round whose lease ended unwatched left no abort: the round would run on
// without it, and nobody could give the next one's seats. This sets the abort its will would
// have set.
void NodeGroup::end_round_lost_unheard(int round) {
  if (!on_etcd() || round <= 0) return;
  const LastRound running = last_round(round);
  if (running.seats.empty() || running.failure) return;  // no seats, or it ended already
  std::vector<long> ids;
  for (const auto& [id, rank] : running.seats) ids.push_back(id);
  auto gone = gone_among(ids);
  if (!gone || gone->empty()) return;
  const long id = gone->front();
  const int rank = running.seats.at(id);
  const JobFailure lost = seated_lost(running, rank, lease_ended_text());
  const std::string abort = "aml/" + phase_ + "/" + std::to_string(round - 1) + "/abort";
  auto stored = control_->compare_set(abort, "", to_json(lost));
  if (stored && *stored == to_json(lost) && options_.say) {
    options_.say("aml-launch: " + options_.self.host + ": round " + std::to_string(round - 1) +
                 "'s node " + std::to_string(rank) + " (" + lost.host + ", launcher " +
                 std::to_string(id) +
                 ") was lost with nobody watching its lease's end: this node ends the round "
                 "for it\n");
  }
}

std::string NodeGroup::lease_ended_text() const {
  return "its etcd lease ended: it died, or was silent or cut off for --node-timeout " +
         seconds_text(options_.node_timeout);
}

// The loss of the launcher seated at `rank` in a round's seats' record (its host from there: this
// launcher's agreement is not that round's).
JobFailure NodeGroup::seated_lost(const LastRound& seated, int rank, const std::string& why) const {
  JobFailure lost = lost_node(rank, why);
  lost.node_rank = rank;
  for (const auto& [id, seat] : seated.seats) {
    const auto known = seated.who.find(id);
    if (seat == rank && known != seated.who.end()) lost.host = known->second.host;
  }
  return lost;
}

}  // namespace aml
