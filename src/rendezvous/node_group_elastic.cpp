// Elastic membership (DESIGN §5): before each round's rendezvous, node 0 (the store's host)
// settles who is in the round and under which node rank. Every other launcher takes a number
// for the job once, then joins a round by taking a slot in it; node 0 waits (the most nodes,
// or the fewest and --rdzv-last-call without a newcomer), chooses the members (stable node
// ranks, membership.hpp), writes each slot's seat, and then the count of slots it looked at:
// a launcher whose slot came after that count was too late and takes one in the next round,
// one without a seat is a hot spare and does the same. A launcher that dies while it waits
// leaves its "gone" key (its last will), so that nobody waits for it.
#include <algorithm>
#include <cstdio>
#include <set>

#include "rendezvous/group_timing.hpp"
#include "rendezvous/membership.hpp"
#include "rendezvous/node_group.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;

namespace {

// How often a waiting launcher looks whether the job ended, and node 0 whether a launcher it
// waits for is gone.
constexpr milliseconds kWaitingLook{200};
constexpr milliseconds kEndReadWait{2000};
// How long a launcher waiting for its seat blocks on node 0's answer before it looks whether
// the job ended: thousands of waiting launchers must not poll the store.
constexpr milliseconds kSeatWait{2000};
constexpr std::string_view kEndedMark = "end";
constexpr std::string_view kNextRoundKey = "aml/elastic/next";
constexpr std::string_view kEndKey = "aml/elastic/end";
constexpr std::string_view kIdsKey = "aml/elastic/ids";

std::string gone_key(long id) { return "aml/elastic/gone/" + std::to_string(id); }
std::string end_read_key(long id) { return "aml/elastic/end-read/" + std::to_string(id); }

// "5 nodes (node 0 a, b, c ...)": who came, for an error.
std::string who_came(const std::vector<std::string>& hosts) {
  std::string text;
  for (std::size_t i = 0; i < hosts.size() && i < 8; ++i) text += (i ? ", " : "") + hosts[i];
  if (hosts.size() > 8) text += " and " + std::to_string(hosts.size() - 8) + " more";
  return text;
}

}  // namespace

std::string NodeGroup::elastic_key(int round, const std::string& name) const {
  return "aml/elastic/" + std::to_string(round) + "/" + name;
}

// Node 0, before the next round: how the last one ended. A failure uses a restart; a lost
// launcher is not waited for.
std::optional<long> NodeGroup::lost_in_last_round() {
  if (round_ < 0) return std::nullopt;
  auto stored = control_.get(key("abort"), milliseconds(0));
  if (!stored || !*stored || **stored == kComplete) return std::nullopt;
  auto failure = job_failure_from_json(**stored);
  if (failure && !failure->regroup) ++restarts_used_;
  if (!failure || !failure->launcher_lost()) return std::nullopt;
  for (const auto& [id, rank] : seats_) {
    if (rank == failure->member_or_node()) return id;
  }
  return std::nullopt;
}

// Which of these launchers left their "gone" key (died while they waited).
Result<std::vector<long>> NodeGroup::gone_among(const std::vector<long>& ids) {
  std::vector<long> gone;
  for (std::size_t first = 0; first < ids.size(); first += kKeysPerCall) {
    std::vector<std::string> keys;
    for (std::size_t i = first; i < ids.size() && keys.size() < kKeysPerCall; ++i) {
      keys.push_back(gone_key(ids[i]));
    }
    auto dead = control_.get_all(keys, milliseconds(0));
    if (!dead) return dead.error();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if ((*dead)[i]) gone.push_back(ids[first + i]);
    }
  }
  return gone;
}

Result<Agreement> NodeGroup::decide_members(int round) {
  const NodeRange range = *options_.elastic;
  std::set<long> not_awaited;
  if (auto lost = lost_in_last_round()) not_awaited.insert(*lost);
  if (auto opened = control_.set(kNextRoundKey, std::to_string(round)); !opened) {
    return opened.error();
  }
  const RoundTimes times{options_.last_call, options_.node_timeout, options_.rdzv_timeout};
  const auto start = Clock::now();
  auto last_arrival = start;
  std::vector<Candidate> joined = {{0, 0}};
  std::vector<std::string> hosts = {options_.self.host};
  std::set<long> gone;
  std::int64_t seen = 0;
  auto last_gone_look = start - kWaitingLook;
  for (;;) {
    auto count = control_.add(elastic_key(round, "count"), 0);
    if (!count) return count.error();
    // The slots that came since the last look, a store call's worth at a time.
    while (seen < *count) {
      std::vector<std::string> keys;
      for (std::int64_t k = seen; k < *count && keys.size() < kKeysPerCall; ++k) {
        keys.push_back(elastic_key(round, "slot/" + std::to_string(k)));
      }
      auto slots = control_.get_all(keys, options_.node_timeout);
      if (!slots) return slots.error();
      for (const auto& slot : *slots) {
        ++seen;
        if (!slot) continue;
        const long id = std::atol(slot->c_str());
        const auto space = slot->find(' ');
        auto previous = seats_.find(id);
        joined.push_back({id, previous != seats_.end() ? previous->second : -1});
        hosts.push_back(space == std::string::npos ? "?" : slot->substr(space + 1));
        last_arrival = Clock::now();
      }
    }
    // Who is still on the way from the last round, and who died while waiting.
    std::vector<long> awaited;
    std::set<long> came;
    for (std::size_t i = 1; i < joined.size(); ++i) came.insert(joined[i].id);
    for (const auto& [id, rank] : seats_) {
      if (id != 0 && !came.contains(id) && !not_awaited.contains(id) && !gone.contains(id)) {
        awaited.push_back(id);
      }
    }
    // The "gone" keys of thousands of launchers are read at most every look, or when the
    // count alone would start the round (a dead one must not be seated), not at every arrival.
    const auto looked = Clock::now();
    const RoundCount by_count{static_cast<int>(joined.size()), static_cast<int>(awaited.size()),
                              std::chrono::duration_cast<milliseconds>(looked - start),
                              std::chrono::duration_cast<milliseconds>(looked - last_arrival)};
    if (when_to_start(by_count, range, times) != RoundStart::wait ||
        looked - last_gone_look >= kWaitingLook) {
      last_gone_look = looked;
      std::vector<long> watched = awaited;
      watched.insert(watched.end(), came.begin(), came.end());
      if (auto found = gone_among(watched); !found) {
        return found.error();
      } else {
        gone.insert(found->begin(), found->end());
      }
    }
    for (std::size_t i = joined.size(); i-- > 1;) {
      if (gone.contains(joined[i].id)) {
        joined.erase(joined.begin() + static_cast<long>(i));
        hosts.erase(hosts.begin() + static_cast<long>(i));
      }
    }
    std::erase_if(awaited, [&gone](long id) { return gone.contains(id); });
    const auto now = Clock::now();
    const RoundCount so_far{static_cast<int>(joined.size()), static_cast<int>(awaited.size()),
                            std::chrono::duration_cast<milliseconds>(now - start),
                            std::chrono::duration_cast<milliseconds>(now - last_arrival)};
    const RoundStart decision = when_to_start(so_far, range, times);
    if (decision == RoundStart::now) break;
    if (decision == RoundStart::too_few) {
      const std::string why =
          "at least " + std::to_string(range.min) + " nodes within --rdzv-timeout " +
          seconds_text(options_.rdzv_timeout) + " for round " + std::to_string(round) + " of run " +
          options_.self.run_id + " (--nnodes " + std::to_string(range.min) + ":" +
          std::to_string(range.max) + "); only " + std::to_string(joined.size()) +
          " came: " + who_came(hosts);
      for (std::size_t i = 1; i < joined.size(); ++i) {
        (void)control_.set(elastic_key(round, "place/" + std::to_string(joined[i].id)),
                           "error " + why);
      }
      (void)control_.set(elastic_key(round, "counted"), std::to_string(seen));
      return invalid("rendezvous", "round " + std::to_string(round), why);
    }
    // Woken by the next launcher to come, else soon enough to see one go.
    (void)control_.get(elastic_key(round, "slot/" + std::to_string(seen)), kWaitingLook);
  }
  const Membership members = choose_members(joined, range.max);
  const int nodes = static_cast<int>(members.by_rank.size());
  seats_.clear();
  for (int rank = 0; rank < nodes; ++rank) {
    const long id = members.by_rank[static_cast<std::size_t>(rank)];
    seats_[id] = rank;
    if (id == 0) continue;
    auto placed = control_.set(
        elastic_key(round, "place/" + std::to_string(id)),
        std::to_string(rank) + " " + std::to_string(nodes) + " " + std::to_string(restarts_used_));
    if (!placed) return placed.error();
  }
  for (long id : members.spares) {
    (void)control_.set(elastic_key(round, "place/" + std::to_string(id)), "spare");
  }
  if (auto counted = control_.set(elastic_key(round, "counted"), std::to_string(seen)); !counted)
    return counted.error();
  (void)control_.set(kNextRoundKey, std::to_string(round + 1));
  options_.self.nnodes = nodes;
  Agreement seat;
  seat.round = round;
  seat.restarts_used = restarts_used_;
  return seat;
}

// Node 0 while a round with fewer than the most nodes runs: a launcher waiting for the next
// round ends this one (all nodes stop their workers and meet again at once).
std::optional<JobFailure> NodeGroup::admit_newcomers() {
  if (!options_.elastic || !options_.admit_at_once || finishing_ ||
      options_.self.nnodes >= options_.elastic->max) {
    return std::nullopt;
  }
  auto waiting = control_.add(elastic_key(round_ + 1, "count"), 0);
  if (!waiting || *waiting == 0) return std::nullopt;
  JobFailure regroup = lost_node(0, "");
  regroup.regroup = true;
  regroup.exit_code = 0;
  regroup.status = "it ends round " + std::to_string(round_) + " to admit " +
                   std::to_string(*waiting) + " node(s) that came (--admit-newcomers at-once)";
  return stored_failure_or(regroup);
}

Result<Agreement> NodeGroup::take_seat(int round) {
  if (launcher_id_ < 0) {
    auto id = control_.add(kIdsKey, 1);  // node 0 is 0: the others count from 1
    if (!id) return id.error();
    launcher_id_ = *id;
  }
  // While it waits, its death takes it out of the next round (node 0 does not wait for it).
  if (auto will = control_.set_last_will(gone_key(launcher_id_), "1"); !will) return will.error();
  auto waits = [this](const std::string& why) {
    if (!said_spare_ && options_.say) {
      options_.say("aml-launch: " + options_.self.host + ": " + why +
                   ": this node waits for the next round as a hot spare\n");
    }
    said_spare_ = true;
  };
  auto next = control_.get(kNextRoundKey, milliseconds(0));
  if (!next) return next.error();
  if (*next && std::atoi((*next)->c_str()) > round) {
    round = std::atoi((*next)->c_str());
    if (launcher_id_ > 0 && round_ < 0) waits("round " + std::to_string(round - 1) + " runs");
  }
  const std::string me = std::to_string(launcher_id_);
  for (;; ++round) {
    auto slot = control_.add(elastic_key(round, "count"), 1);
    if (!slot) return slot.error();
    const std::int64_t mine = *slot - 1;
    if (auto set = control_.set(elastic_key(round, "slot/" + std::to_string(mine)),
                                me + " " + options_.self.host);
        !set) {
      return set.error();
    }
    std::optional<std::string> counted;
    while (!counted || *counted == kEndedMark) {
      // Node 0 writes the count when it seated the round, or the end mark when the job
      // ended; the end key is also read after each long wait, for a slot taken after that.
      auto looked = control_.get(elastic_key(round, "counted"), kSeatWait);
      if (!looked) {
        Error error = looked.error();
        error.expected += " (node 0's store went away while this node waited for round " +
                          std::to_string(round) + ": node 0 was lost, or the job ended)";
        return error;
      }
      counted = *looked;
      if (counted && *counted != kEndedMark) break;
      auto ended = control_.get(kEndKey, milliseconds(0));
      if (ended && *ended) {
        (void)control_.set(end_read_key(launcher_id_), "1");
        Agreement end;
        end.round = round;
        const std::string& text = **ended;
        const auto newline = text.find('\n');
        end.ended = JobEnd{std::atoi(text.c_str()),
                           newline == std::string::npos ? "" : text.substr(newline + 1)};
        return end;
      }
    }
    if (mine >= std::atoll(counted->c_str())) {
      waits("round " + std::to_string(round) + " began before this node came");
      continue;
    }
    auto place = control_.get(elastic_key(round, "place/" + me), milliseconds(0));
    if (!place) return place.error();
    if (!*place) continue;  // it was seen gone (should not be): try the next round
    if (**place == "spare") {
      waits("round " + std::to_string(round) + " has the most nodes (" +
            std::to_string(options_.elastic->max) + ")");
      continue;
    }
    if ((*place)->starts_with("error ")) {
      return invalid("rendezvous", "round " + std::to_string(round), (*place)->substr(6));
    }
    int rank = 0, nodes = 0, used = 0;
    if (std::sscanf((*place)->c_str(), "%d %d %d", &rank, &nodes, &used) != 3) {
      return invalid("rendezvous", **place, "a seat from node 0 (node rank, nodes, restarts)");
    }
    options_.self.node_rank = rank;
    options_.self.nnodes = nodes;
    said_spare_ = false;
    Agreement seat;
    seat.round = round;
    seat.restarts_used = used;
    return seat;
  }
}

void NodeGroup::end_of_job(int exit_code, const std::string& said) {
  if (!options_.elastic || options_.self.node_rank != 0 || !host_) return;
  (void)control_.set(kEndKey, std::to_string(exit_code) + "\n" + said);
  // The launchers waiting for the next round read it before the store goes away.
  auto next = control_.get(kNextRoundKey, milliseconds(0));
  if (!next || !*next) return;
  const int round = std::atoi((*next)->c_str());
  // Wakes the launchers that wait for this round's seats.
  (void)control_.set(elastic_key(round, "counted"), std::string(kEndedMark));
  auto count = control_.add(elastic_key(round, "count"), 0);
  if (!count || *count == 0) return;
  std::vector<std::string> slots;
  for (std::int64_t k = 0; k < *count && slots.size() < kKeysPerCall; ++k) {
    slots.push_back(elastic_key(round, "slot/" + std::to_string(k)));
  }
  auto ids = control_.get_all(slots, milliseconds(0));
  if (!ids) return;
  std::vector<std::string> readers;
  for (const auto& slot : *ids) {
    if (!slot) continue;
    const long id = std::atol(slot->c_str());
    auto gone = control_.check({gone_key(id)});
    if (!gone || !*gone) readers.push_back(end_read_key(id));
  }
  if (!readers.empty()) (void)control_.wait(readers, kEndReadWait);
}

}  // namespace aml
