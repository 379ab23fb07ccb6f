// Elastic membership from a waiting launcher's side (DESIGN §5): it takes a number for the job
// once, then a slot in a round, and waits for the place that round's coordinator gives its slot
// (a node rank, "spare" or "late": it waits for the next round). Each step is one batch (one
// etcd transaction). Under etcd a member of the round before (but the few that claim a round at
// once) takes no slot: its seat comes on the watch it opened while that round ran. A launcher
// that finds nobody giving a round's seats (or the one who claimed it lost) gives them itself. And
// the job's end, told to the launchers still waiting.
#include <algorithm>
#include <cstdio>

#include "rendezvous/elastic_keys.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"
#include "rendezvous/round_answers.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;
using namespace elastic_keys;

void NodeGroup::waits_as_spare(const std::string& why) {
  if (!said_spare_ && options_.say) {
    options_.say("aml-launch: " + options_.self.host + ": " + why +
                 ": this node waits for the next round as a hot spare\n");
  }
  if (!said_spare_ && options_.waits) options_.waits("spare_waiting", why);
  said_spare_ = true;
}

// The job's number for this launcher, once: etcd's lease ID, or the next count of node 0's
// store (node 0 is 0: the others count from 1).
Result<long> NodeGroup::launcher_number() {
  if (launcher_id_ >= 0) return launcher_id_;
  if (auto own = control_->own_number()) return launcher_id_ = *own;
  auto id = control_->add(kIdsKey, 1);
  if (!id) return id.error();
  return launcher_id_ = *id;
}

// The job's end as a waiting launcher reads it (the end key: "CODE\nTOLD\nwhat was said").
Result<std::optional<Agreement>> NodeGroup::ended_job(int round) {
  auto ended = control_->get(kJobEndKey, milliseconds(0));
  if (!ended) return ended.error();
  if (!*ended) return std::optional<Agreement>();
  Agreement end;
  end.round = round;
  const std::string& text = **ended;
  JobEnd job_end{std::atoi(text.c_str()), "", ""};
  if (const auto newline = text.find('\n'); newline != std::string::npos) {
    const auto told_end = text.find('\n', newline + 1);
    job_end.told = text.substr(newline + 1, told_end - newline - 1);
    job_end.said = told_end == std::string::npos ? "" : text.substr(told_end + 1);
  }
  end.ended = job_end;
  // The bench as the job's last round left it: a benched node's own summary lists it too.
  for (int r = round; r >= 0 && r >= round - 2 && end.bench.empty(); --r)
    end.bench = round_bench(r);
  // Read: node 0's store may go now (it waits for this mark, not longer), so the mark comes
  // after the last read (a benched node's summary lacked the bench when the store went first).
  (void)control_->set(end_read_key(launcher_id_), "1");
  return std::optional<Agreement>(end);
}

std::vector<BatchOp> NodeGroup::round_news(int round) const {
  if (!on_etcd()) return {};
  return {BatchOp::get_now(round_key(round, "abort")),
          BatchOp::get_now(round_key(round, "verdict"))};
}

Result<Agreement> NodeGroup::take_seat(int round) {
  const auto waiting_since = Clock::now();
  if (auto id = launcher_number(); !id) return id.error();
  auto waits = [this](const std::string& why) { waits_as_spare(why); };
  const std::string me = std::to_string(launcher_id_);
  // What a slot brings: "ID HOST RANK INFO", the launcher's number, its host, its node rank in
  // the last round, and what it says of itself (a running job refuses a newcomer that
  // disagrees with it; the round's node 0 names its members).
  auto slot_now = [&] {
    return me + " " + options_.self.host + " " + std::to_string(options_.self.node_rank) + " " +
           to_json(options_.self);
  };
  std::string slot = slot_now();
  // etcd: a member of the round before, its watch for this round's seat open (watch_next_seat)
  // and its "gone" will standing, is seated without a slot (decide_members): it does not look
  // but waits on that watch, unless it is one of those who claim a round's seats at once.
  // After a loss that is a thousand transactions fewer for etcd while the seats are given.
  const bool seated_without_slot = on_etcd() && round > 0 && round_ == round - 1 &&
                                   options_.self.node_rank >= 0 && gone_will_set_ && seat_watch_ &&
                                   seat_watch_round_ == round && !may_claim(true);
  bool claimed = false;
  std::optional<std::int64_t> looked_slot;  // its slot in `round`, taken by the look
  std::vector<std::optional<std::string>> seen;
  if (!seated_without_slot) {
    // One look: which round is open and, in the same batch, this launcher counted in the
    // round it expects with its slot, and its last will (while it waits, its death takes it
    // out of the next round: nobody waits for it), and whether that round's coordinator
    // closed it already or answered its key; under etcd, the round's seats claimed or who
    // gives them. A count in a round already closed is late: nobody waits for its slot.
    std::vector<BatchOp> look = {BatchOp::get_now(std::string(kNextRoundKey)),
                                 BatchOp::add_one(elastic_key(round, "count"), slot),
                                 BatchOp::get_now(elastic_key(round, "counted")),
                                 BatchOp::get_now(place_key(round, launcher_id_))};
    // etcd: the round's abort and verdict, absent now, are then watched with its seat.
    for (BatchOp& op : round_news(round)) look.push_back(std::move(op));
    // The will, unless set already (under etcd it lasts through the rounds: a member keeps
    // it): a write fewer for etcd.
    if (!gone_will_set_) look.push_back(BatchOp::lasting_will(gone_key(launcher_id_), "1"));
    const std::size_t claim_ops = look.size();  // where the look's claim (or its reads) begins
    if (may_claim(true)) {
      if (round == 0) {
        look.push_back(BatchOp::claim(elastic_key(round, "coordinator"), me));
      } else {
        for (BatchOp& op : claim_look(round)) look.push_back(std::move(op));
      }
    }
    auto looked = control_->batch(look);
    if (!looked) return looked.error();
    seen = std::move(*looked);
    gone_will_set_ = true;
    const auto& next = seen.front();
    // A round opened past `round` is waited for, unless `round` gave this launcher a place
    // already (it was seated without its slot).
    const bool placed = seen[3] && answer_in(*seen[3], launcher_id_) != kLateMark;
    if (next && std::atoi(next->c_str()) > round && !placed) {
      round = std::atoi(next->c_str());
      // Not a member of the round that runs (a newcomer, or one that comes back after it was
      // counted lost): a hot spare until it ends.
      if (launcher_id_ > 0 && round_ != round - 1) {
        waits("round " + std::to_string(round - 1) + " runs");
      }
      claimed = coordinates(round, true);
    } else {
      looked_slot = std::atoll(seen[1].value_or("1").c_str()) - 1;
      if (look.size() == claim_ops + 1) {
        claimed = seen[claim_ops] == me;
      } else if (look.size() > claim_ops) {
        claimed = claims(round, {seen.begin() + static_cast<long>(claim_ops), seen.end()});
      }
    }
  }
  for (bool first_round = true;; ++round, first_round = false) {
    // (A coordinator that counted itself in passes over its own slot.)
    if (first_round ? claimed : coordinates(round, true)) return decide_members(round);
    std::int64_t mine = 0;
    std::optional<std::string> counted;  // the count the coordinator closed the round at
    // Its place is written by the round's coordinator once it seats the round (its key's
    // record, which says "late" to whoever it does not name); a slot at or past the count it
    // closed the round at came too late.
    const std::string place = place_key(round, launcher_id_);
    std::optional<std::string> seat_said;
    if (first_round && seated_without_slot) {
      mine = -1;  // no slot: never late by the count, its place says
    } else if (first_round && looked_slot) {
      mine = *looked_slot;
      counted = seen[2];
      if (seen[3]) seat_said = answer_in(*seen[3], launcher_id_);
    } else {
      // Counted in a later round after a wait: what it says of itself as its checks are now
      // (the round's giver benches a spare that turned sick).
      read_own_checks_if_stale();
      slot = slot_now();
      std::vector<BatchOp> enlist = {BatchOp::add_one(elastic_key(round, "count"), slot),
                                     BatchOp::get_now(elastic_key(round, "counted")),
                                     BatchOp::get_now(place)};
      for (BatchOp& op : round_news(round)) enlist.push_back(std::move(op));
      auto counted_in = control_->batch(enlist);
      if (!counted_in) return counted_in.error();
      mine = std::atoll((*counted_in)[0].value_or("1").c_str()) - 1;
      counted = (*counted_in)[1];
      if ((*counted_in)[2]) seat_said = answer_in(*(*counted_in)[2], launcher_id_);
    }
    // Under etcd it waits on a connection of its own that follows the round's abort and
    // verdict too, and is the round's watch once it is seated (opened while the round before
    // ran, where this launcher ran it: watch_next_seat).
    if (on_etcd() && !seat_said && (!seat_watch_ || seat_watch_round_ != round)) {
      seat_watch_.reset();
      auto dialed = dial_seat_watch(round);
      if (!dialed) return dialed.error();
      seat_watch_ = std::move(*dialed);
      seat_watch_round_ = round;
    }
    RendezvousClient* waits_on = on_etcd() ? seat_watch_.get() : control_.get();
    seat_round_ = round;
    last_answer_ = Clock::now();  // the rendezvous answered its count just now
    for (bool first_look = true; !seat_said; first_look = false) {
      if (counted && *counted == kEndedMark) seat_said = std::string(kEndedMark);
      if (seat_said || (counted && mine >= std::atoll(counted->c_str()))) break;
      // etcd: the coordinator was lost (its claim went with its lease); a waiting launcher
      // takes over.
      if (!first_look && coordinates(round, false)) return decide_members(round);
      // The coordinator writes this slot's place when it seats the round (or marks it late,
      // or the job's end); after each long wait it looks at the count and the job's end too.
      // Under etcd a coordinator lost meanwhile is known only when its lease ends
      // (--node-timeout) anyway.
      const milliseconds wait = on_etcd() ? std::max(kSeatWait, options_.node_timeout) : kSeatWait;
      const auto asked = Clock::now();
      auto seated = waits_on->get(place, progress_.slice(wait, asked));
      // etcd: a member lost or a leader being elected while it waits is not the rendezvous's
      // loss; asked again, as a running node does (a new leader renews every lease).
      if (!seated && etcd_in_grace(asked)) continue;
      if (!seated) {
        Error error = seated.error();
        error.expected += on_etcd()
                              ? " (etcd could not be reached while this node waited for "
                                "round " +
                                    std::to_string(round) + ")"
                              : " (node 0's store went away while this node waited for "
                                "round " +
                                    std::to_string(round) + ": node 0 was lost, or the job ended)";
        return error;
      }
      last_answer_ = Clock::now();
      if (*seated) {
        seat_said = answer_in(**seated, launcher_id_);
        break;
      }
      say_progress("counted in for round " + std::to_string(round) + " at " +
                       rendezvous_text(options_) + ", waiting for its seat: the round starts " +
                       "once " + std::to_string(options_.elastic->min) + " of --nnodes " +
                       std::to_string(options_.elastic->min) + ":" +
                       std::to_string(options_.elastic->max) + " nodes have come",
                   waiting_since + options_.rdzv_timeout);
      const auto asked_again = Clock::now();
      auto again = control_->batch({BatchOp::get_now(elastic_key(round, "counted")),
                                    BatchOp::get_now(std::string(kJobEndKey))});
      if (!again && etcd_in_grace(asked_again)) continue;
      if (!again) return again.error();
      last_answer_ = Clock::now();
      counted = (*again)[0];
      if ((*again)[1]) seat_said = std::string(kEndedMark);
      end_round_lost_unheard(round);  // the round before, where its loss went unheard
    }
    if (!seat_said || *seat_said == kLateMark) {  // too late, or seen gone (should not be)
      waits("round " + std::to_string(round) + " began before this node came");
      continue;
    }
    if (*seat_said == kEndedMark) {
      auto end = ended_job(round);
      if (!end) return end.error();
      if (*end) return **end;
      continue;  // the round was closed for the end, which is not written yet: look again
    }
    if (*seat_said == "spare") {
      waits("round " + std::to_string(round) + " has the most nodes (" +
            std::to_string(options_.elastic->max) + ")");
      continue;
    }
    if (seat_said->starts_with("benched ")) {
      waits_benched(seat_said->substr(8));
      continue;
    }
    if (seat_said->starts_with("error ")) {
      return invalid("rendezvous", "round " + std::to_string(round), seat_said->substr(6));
    }
    int rank = 0, nodes = 0, used = 0;
    if (std::sscanf(seat_said->c_str(), "%d %d %d", &rank, &nodes, &used) != 3) {
      return invalid("rendezvous", *seat_said, "a seat from node 0 (node rank, nodes, restarts)");
    }
    // etcd: a seat read late (this launcher was away as it was given: paused, starved, etcd out
    // of its reach) may be in a round of a job that has ended since, or in a round that has
    // ended. etcd keeps both: it ends as the job did, or goes on to the next round (its
    // members seat it there) without starting workers in a round that is over.
    if (on_etcd()) {
      auto now = control_->batch(
          {BatchOp::get_now(std::string(kJobEndKey)), BatchOp::get_now(round_key(round, "abort"))});
      if (now && (*now)[0]) {
        if (auto end = ended_job(round); end && *end) return **end;
      }
      if (now && (*now)[1]) {
        if (options_.say) {
          options_.say("aml-launch: " + options_.self.host + ": round " + std::to_string(round) +
                       " ended before this node read its seat there; it goes on to round " +
                       std::to_string(round + 1) + "\n");
        }
        continue;
      }
    }
    return seated_at(round, rank, nodes, used);
  }
}

// This launcher's seat in `round`: its node rank among `nodes`.
Agreement NodeGroup::seated_at(int round, int rank, int nodes, int restarts_used) {
  options_.self.node_rank = rank;
  options_.self.nnodes = nodes;
  said_spare_ = false;
  said_benched_ = false;  // seated again at MIN: benched again after, it says so again
  seat_round_ = round;
  Agreement seat;
  seat.round = round;
  seat.restarts_used = restarts_used;
  return seat;
}

// A connection of its own for a launcher's seat in `round` that follows the round's abort and
// verdict too.
Result<std::unique_ptr<RendezvousClient>> NodeGroup::dial_seat_watch(int round) {
  auto dialed = dial_(std::max(kShortestReplyTimeout, options_.node_timeout));
  if (!dialed) return dialed.error();
  (*dialed)->follow_beside(round_key(round, "abort"));
  (*dialed)->follow_beside(round_key(round, "verdict"));
  return dialed;
}

// Under etcd, once this launcher's round runs: its watch for its place in the next round, its
// abort and verdict, opened now rather than after a loss, when a thousand launchers would open
// theirs at once (a watch costs etcd about what a write does). Without it, take_seat opens one.
void NodeGroup::watch_next_seat() {
  next_seat_due_ = false;
  if (!on_etcd() || !options_.elastic || launcher_id_ < 0) return;
  const int next = round_ + 1;
  const std::string place = place_key(next, launcher_id_);
  auto dialed = dial_seat_watch(next);
  if (!dialed) return;
  // Read absent in one transaction: the watch follows all three from its revision.
  std::vector<BatchOp> absent = {BatchOp::get_now(place)};
  for (BatchOp& op : round_news(next)) absent.push_back(std::move(op));
  auto read = (*dialed)->batch(absent);
  if (!read || std::any_of(read->begin(), read->end(), [](const auto& v) { return v.has_value(); }))
    return;
  if (!(*dialed)->start_get(place, watch_interval())) return;
  seat_watch_ = std::move(*dialed);
  seat_watch_round_ = next;
}

void NodeGroup::end_of_job(int exit_code, const std::string& said, const std::string& told) {
  // Node 0's store's host says it; under etcd every member of the last round does (the first
  // one is kept), since any of them may be lost. Where that host sat the last round out, the
  // round's node 0 does, the last to leave its store (the host goes once it is said). Under
  // etcd a fixed-size job says it too: its id may be used again.
  const bool tells =
      host_ != nullptr || (on_etcd() ? options_.self.node_rank >= 0
                                     : node0_serves_own_store() && options_.self.node_rank == 0);
  // Not one the job counted lost and went on without (it leaves alone: a notice came as it
  // ran again): the others' job goes on.
  if ((!options_.elastic && !on_etcd()) || !tells || (counted_lost_ && !host_)) return;
  // "CODE\nTOLD\nSAID": TOLD one line of JSON (its strings' line breaks escaped).
  const std::string news = std::to_string(exit_code) + "\n" + told + "\n" + said;
  auto kept = control_->compare_set(kJobEndKey, "", news);
  // The launchers waiting for the next round read it before the store goes away (etcd keeps
  // it for those that come later); node 0 wakes them (were it lost, they see it at their
  // next look).
  if (!kept || (options_.self.node_rank != 0 && !host_)) return;
  auto next = control_->get(kNextRoundKey, milliseconds(0));
  if (!next || !*next) return;
  const int round = std::atoi((*next)->c_str());
  auto count = control_->add(elastic_key(round, "count"), 0);
  if (!count) return;
  // Each waiting launcher's place says so, and the count (for a slot taken after this look).
  auto ended = answer_records(elastic_key(round, "count"), {}, kEndedMark);
  ended.emplace_back(elastic_key(round, "counted"), std::string(kEndedMark));
  (void)control_->set_many(ended);
  if (!host_ || *count == 0) return;
  auto ids = control_->arrivals(elastic_key(round, "count"), 0,
                                std::min<std::int64_t>(*count, kKeysPerCall), milliseconds(0));
  if (!ids) return;
  std::vector<std::string> readers;
  for (const auto& slot : *ids) {
    if (!slot) continue;
    const long id = std::atol(slot->c_str());
    auto gone = control_->check({gone_key(id)});
    if (!gone || !*gone) readers.push_back(end_read_key(id));
  }
  if (!readers.empty()) (void)control_->wait(readers, kEndReadWait);
}

}  // namespace aml
