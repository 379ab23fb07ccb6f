// Elastic membership (DESIGN §5): before each round's rendezvous, its coordinator (node 0's
// store's host; under etcd, the first launcher to claim the round) settles who is in the round
// and under which node rank. Every other launcher takes a slot in the round
// (node_group_seat.cpp); the coordinator waits (the most nodes, or the fewest and
// --rdzv-last-call without a newcomer), chooses the members (stable node ranks from the last
// round's seats, membership.hpp), writes each slot's place (its seat, or "spare"), the round's
// seats for whoever gives the next one, and then the count of slots it looked at; a slot taken
// after that count was too late (its place says "late", or the count tells it) and its
// launcher takes one in the next round, as a hot spare does. A launcher waits on its slot's
// place alone: one key, one watch. One that dies while it waits leaves its "gone" key (its last
// will), so that nobody waits for it. Under etcd, after the first round, the members of the
// round before are seated without their slots (but the one it lost): a thousand looks after a
// loss are not waited for, and a member that is gone is found by its "gone" key (a lasting
// will, set at its first look), before the seats or by the round's node 0 once it runs.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "rendezvous/elastic_keys.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/membership.hpp"
#include "rendezvous/node_group.hpp"
#include "rendezvous/round_answers.hpp"
#include "supervisor/failure_summary.hpp"
#include "util/failpoint.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;
using namespace elastic_keys;

namespace {

// "a, b, c and 2 more": the hosts of who came, for an error.
std::string who_came(const std::vector<Candidate>& joined,
                     const std::map<long, SeatedLauncher>& who) {
  std::string text;
  for (std::size_t i = 0; i < joined.size() && i < 8; ++i) {
    auto found = who.find(joined[i].id);
    text += (i ? ", " : "") + (found == who.end() ? std::string("?")
                               : found->second.addr.empty()
                                   ? found->second.host
                                   : found->second.host + " (" + found->second.addr + ")");
  }
  if (joined.size() > 8) text += " and " + std::to_string(joined.size() - 8) + " more";
  return text;
}

// "; sitting out: b (failed its health check: ...)": the nodes that came but were not counted.
std::string sitting_out_text(const std::map<long, std::string>& sitting_out,
                             const std::map<long, SeatedLauncher>& who) {
  std::string text;
  for (const auto& [id, why] : sitting_out) {
    const auto known = who.find(id);
    text += (text.empty() ? "; sitting out: " : ", ") +
            (known == who.end() ? std::string("?") : known->second.host) + " (" + why + ")";
  }
  return text;
}

}  // namespace

std::string NodeGroup::elastic_key(int round, const std::string& name) const {
  return "aml/elastic/" + std::to_string(round) + "/" + name;
}

Result<Agreement> NodeGroup::decide_members(int round) {
  const NodeRange range = *options_.elastic;
  // A node 0 that came back (a new launcher at the endpoint) takes the job's state from the
  // survivors; looked at again while it waits for them.
  if (auto resumed = resumed_round(); resumed && *resumed != round) return decide_members(*resumed);
  if (on_etcd() && round > 0) {
    // Its seats given already, by a launcher lost before it told them all.
    auto given = control_->get(elastic_key(round, "seats"), milliseconds(0));
    if (!given) return given.error();
    if (*given) return complete_seating(round, **given);
  }
  LastRound last = last_round(round);
  if (resumed_ && round == resume_round_) last.restarts_used = resume_restarts_;
  std::set<long> not_awaited;
  if (last.lost) not_awaited.insert(*last.lost);
  // Who sits this round out (bench.hpp): benched before, benched by how the last round ended,
  // or failing its checks now; by launcher, what its place says. A node benched for what it
  // did (not failing now) may be seated again where the job would otherwise end.
  BenchBook book{last.bench, last.first_failures, {}, {}};
  for (const auto& seat : last.seats) book.seated_last.insert(seat.first);
  bench_by_last_round(book, last, round);
  bench_stragglers(book, last, round);
  std::map<long, std::string> sitting_out;
  std::vector<long> reseatable;
  // Node 0's store's host is launcher 0, node 0 wherever it is seated; under etcd the
  // coordinator is a candidate like the others, with the rank it had.
  const long me = host_ ? 0 : launcher_id_;
  const auto my_seat = last.seats.find(me);
  const int my_rank = my_seat != last.seats.end() ? my_seat->second : -1;
  // The store's host sat the last round out (node_group_keeper.cpp): the next round is given
  // once a member of it asks (or all are gone), never after the job's end.
  const bool host_sat_out = host_ && round > 0 && !last.seats.empty() && my_rank < 0;
  if (auto opened = control_->set(kNextRoundKey, std::to_string(round)); !opened) {
    return opened.error();
  }
  // The wills of launchers that die while they wait are its to set (their "gone" keys).
  if (auto watching = control_->watch_wills(true); !watching) return watching.error();
  const RoundTimes times{options_.last_call, options_.node_timeout, options_.rdzv_timeout};
  const auto start = Clock::now();
  auto last_arrival = start;
  std::vector<Candidate> joined = {{me, my_rank}};
  std::set<long> gone;
  std::map<long, SeatedLauncher> who = {
      {me, {options_.self.host, options_.self.pid, options_.self.addr, options_.self.machine}}};
  std::map<long, std::string> refused;  // by launcher: why
  // Whether a launcher that came sits out: failing its checks now, or benched.
  auto look_at = [&](long id, int rank, const std::string& host, const std::string& addr,
                     const std::string& machine, const std::string& health) {
    if (!health.empty()) {
      book.add({id, host, addr, machine, rank, "failed its health check", health,
                utc_timestamp(std::chrono::system_clock::now()), round, who[id].pid},
               round);
      sitting_out[id] = "failed its health check: " + health;
    } else if (const BenchedNode* benched = book.find(id, addr, machine)) {
      sitting_out[id] = benched->reason + (benched->figure.empty() ? "" : ": " + benched->figure);
      reseatable.push_back(id);
    }
  };
  look_at(me, my_rank, options_.self.host, options_.self.addr, options_.self.machine,
          options_.self.health);
  // etcd: the last round's members, but the one it lost, are seated without their slots
  // (node_group_seat.cpp): nobody waits for a thousand looks after a loss. One that is gone
  // left its "gone" key, read before the seats are given, or read by the round's node 0 once
  // it runs (node_group_round_at_once.cpp).
  std::set<long> in_round = {me};  // who joined: each launcher once, whatever its slots
  if (on_etcd() && round > 0 && !resumed_) {
    for (const auto& [id, rank] : last.seats) {
      if (id == me || not_awaited.contains(id)) continue;
      in_round.insert(id);
      joined.push_back({id, rank});
      const auto known = last.who.find(id);
      who[id] = known != last.who.end() ? known->second : SeatedLauncher{"?", 0, "", ""};
      look_at(id, rank, who[id].host, who[id].addr, who[id].machine, "");
    }
  }
  std::int64_t seen = 0;
  // The round cannot be: every launcher that came (and the refused) is told why, and so is this.
  auto fail_everyone = [&](const std::string& why) -> Result<Agreement> {
    std::map<long, std::string> answers = refused;
    for (std::size_t i = 1; i < joined.size(); ++i) answers[joined[i].id] = "error " + why;
    auto places = answer_records(elastic_key(round, "count"), answers, kLateMark);
    places.emplace_back(elastic_key(round, "counted"), std::to_string(seen));
    (void)control_->set_many(places);
    return invalid("rendezvous", "round " + std::to_string(round), why);
  };
  auto last_gone_look = start - kWaitingLook;
  const std::string count_key = elastic_key(round, "count");
  for (bool first_look = true;; first_look = false) {
    // Woken by the next launcher to come, else soon enough to see one go.
    auto count =
        control_->wait_count(count_key, seen, RendezvousClient::arrival_key(count_key, seen),
                             first_look ? milliseconds(0) : kWaitingLook);
    if (!count) return count.error();
    // The slots that came since the last look, a store call's worth at a time.
    while (seen < *count) {
      auto slots =
          control_->arrivals(count_key, seen, std::min<std::int64_t>(*count, seen + kKeysPerCall),
                             options_.node_timeout);
      if (!slots) return slots.error();
      for (const auto& slot : *slots) {
        ++seen;
        // Its launcher died before it said who it is, or etcd lost the history: told "late".
        if (!slot) continue;
        // "ID HOST RANK INFO": the launcher's number, its host, its node rank in the last
        // round, and what it says of itself (node_info.hpp).
        long id = -1;
        int carried = -1, info_at = 0;
        char host[256] = "?";
        std::sscanf(slot->c_str(), "%ld %255s %d %n", &id, host, &carried, &info_at);
        // A coordinator that took over had taken a slot; a member seated without one may
        // have taken one too; one that came back (etcd lost a while) took another. Joined
        // twice, one slot would seat it and the other call it a spare, the answer it reads.
        if (!in_round.insert(id).second) continue;
        const auto info = info_at > 0 ? node_info_from_json(slot->substr(info_at)) : std::nullopt;
        auto previous = last.seats.find(id);
        // A newcomer that disagrees with the running job is refused, and the job goes on.
        if (round > 0 && !resumed_ && info && previous == last.seats.end()) {
          if (auto problem = newcomer_disagreement(options_.self, *info)) {
            refused[id] = "error nodes that agree on the job; " + *problem;
            continue;
          }
        }
        who[id] = {host, info ? info->pid : 0, info ? info->addr : std::string(),
                   info ? info->machine : std::string()};
        // The last round's seats say who had which rank; after node 0 came back (a new store
        // without them), the survivors say it themselves.
        const int rank = previous != last.seats.end() ? previous->second : resumed_ ? carried : -1;
        joined.push_back({id, rank});
        if (info) look_at(id, rank, host, info->addr, info->machine, info->health);
        last_arrival = Clock::now();
      }
    }
    // Who is still on the way from the last round, and who died while waiting.
    std::vector<long> awaited;
    std::set<long> came;
    for (std::size_t i = 1; i < joined.size(); ++i) came.insert(joined[i].id);
    for (const auto& [id, rank] : last.seats) {
      if (id != me && !came.contains(id) && !not_awaited.contains(id) && !gone.contains(id)) {
        awaited.push_back(id);
      }
    }
    // The "gone" keys of thousands of launchers are read at most every look, or when the
    // count alone would start the round (a dead one must not be seated), not at every arrival.
    const auto looked = Clock::now();
    auto seatable = [&] {
      int count = 0;
      for (const Candidate& c : joined) count += sitting_out.contains(c.id) ? 0 : 1;
      return count;
    };
    const RoundCount by_count{seatable(), static_cast<int>(awaited.size()),
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
      // etcd: the run ended meanwhile (this launcher came back to it after its end): nothing
      // more is seated, and it ends as the job did.
      if (on_etcd() && !first_look) {
        auto end = ended_job(round);
        if (!end || *end) return end ? **end : Result<Agreement>(end.error());
      }
    }
    for (std::size_t i = joined.size(); i-- > 1;) {
      if (gone.contains(joined[i].id)) {
        joined.erase(joined.begin() + static_cast<long>(i));
      }
    }
    std::erase_if(awaited, [&gone](long id) { return gone.contains(id); });
    std::erase_if(reseatable, [&gone](long id) { return gone.contains(id); });
    const auto now = Clock::now();
    // Too few without the bench, nobody else on the way (or those of the last round given up
    // after --node-timeout, as when_to_start gives them up), the last call over: the job would
    // end. Benched nodes that pass their checks now are seated again, and that is said.
    if (seatable() < range.min && (awaited.empty() || now - start >= options_.node_timeout) &&
        !reseatable.empty() && seatable() + static_cast<int>(reseatable.size()) >= range.min &&
        now - last_arrival >= options_.last_call) {
      std::string names;
      while (seatable() < range.min) {
        const long id = reseatable.front();
        reseatable.erase(reseatable.begin());
        sitting_out.erase(id);
        names += (names.empty() ? "" : ", ") + who[id].host + " (" + who[id].addr + ")";
      }
      if (options_.say) {
        options_.say("aml-launch: round " + std::to_string(round) + ": benched node(s) " + names +
                     " seated again: without them the job would have fewer than " +
                     std::to_string(range.min) + " nodes and end\n");
      }
    }
    const RoundCount so_far{seatable(), static_cast<int>(awaited.size()),
                            std::chrono::duration_cast<milliseconds>(now - start),
                            std::chrono::duration_cast<milliseconds>(now - last_arrival)};
    RoundStart decision = when_to_start(so_far, range, times);
    if (host_sat_out) {
      // The job ended while its last round's members were away: nothing more is seated.
      if (auto end = ended_job(round); !end || *end) {
        if (!end) return end.error();
        return **end;
      }
      const bool member_came = std::any_of(joined.begin(), joined.end(), [&last](const auto& c) {
        return last.seats.contains(c.id);
      });
      // Gone: its "gone" key, or the launcher the last round lost (not looked at again).
      const bool all_gone = std::all_of(
          last.seats.begin(), last.seats.end(), [&gone, &not_awaited](const auto& seat) {
            return gone.contains(seat.first) || not_awaited.contains(seat.first);
          });
      // All left on a stop, or with no restart left, and none lived to say the end: it is the
      // last round's failure.
      if (all_gone && !member_came && last.failure &&
          (last.failure->stop_signal != 0 || last.restarts_used > options_.self.max_restarts)) {
        Agreement end;
        end.round = round;
        end.ended = JobEnd{last.failure->exit_code != 0 ? last.failure->exit_code : 1,
                           "aml-launch: round " + std::to_string(round - 1) +
                               "'s members all left without a word after its failure: " +
                               last.failure->describe() + "\n",
                           "{\"first_failure\":" + to_json(*last.failure) + ",\"notice\":null}"};
        end.bench = book.bench;
        return end;
      }
      if (decision == RoundStart::now && !member_came && !all_gone) decision = RoundStart::wait;
    }
    if (decision == RoundStart::now) break;
    if (decision == RoundStart::too_few) {
      const std::string why =
          "at least " + std::to_string(range.min) + " nodes within --rdzv-timeout " +
          seconds_text(options_.rdzv_timeout) + " for round " + std::to_string(round) + " of run " +
          options_.self.run_id + " (--nnodes " + std::to_string(range.min) + ":" +
          std::to_string(range.max) + "); only " + std::to_string(joined.size()) +
          " came: " + who_came(joined, who) + sitting_out_text(sitting_out, who);
      return fail_everyone(why);
    }
    say_progress("round " + std::to_string(round) + " waits for at least " +
                     std::to_string(range.min) + " nodes (--nnodes " + std::to_string(range.min) +
                     ":" + std::to_string(range.max) + ") at " + rendezvous_text(options_) + ": " +
                     std::to_string(seatable()) + " came: " + who_came(joined, who) +
                     sitting_out_text(sitting_out, who),
                 start + options_.rdzv_timeout);
    if (auto resumed = resumed_round(); resumed && *resumed != round) {
      return decide_members(*resumed);
    }
  }
  std::vector<Candidate> seatable;
  for (const Candidate& c : joined) {
    if (!sitting_out.contains(c.id)) seatable.push_back(c);
  }
  const Membership members = choose_members(seatable, range.max);
  const int nodes = static_cast<int>(members.by_rank.size());
  const int restarts_used = last.restarts_used;
  std::map<long, int> seats;
  nlohmann::ordered_json record = {{"restarts_used", restarts_used},
                                   {"seats", nlohmann::ordered_json::array()}};
  auto& bench = record["bench"] = nlohmann::ordered_json::array();
  for (const BenchedNode& node : book.bench) bench.push_back(bench_json(node));
  auto& first_failures = record["first_failures"] = nlohmann::ordered_json::object();
  for (const auto& [id, count] : book.first_failures) first_failures[std::to_string(id)] = count;
  // By launcher; the others (unread, gone) are late.
  std::map<long, std::string> answers = refused;
  for (int rank = 0; rank < nodes; ++rank) {
    const long id = members.by_rank[static_cast<std::size_t>(rank)];
    seats[id] = rank;
    // With its host and launcher's pid: the round's node 0 names its members from it.
    record["seats"].push_back({id, rank, who[id].host, who[id].pid, who[id].addr, who[id].machine});
    // Its own too: come back after a loss of etcd (its lease alive), it reads its seat there.
    answers[id] =
        std::to_string(rank) + " " + std::to_string(nodes) + " " + std::to_string(restarts_used);
  }
  for (long id : members.spares) answers[id] = "spare";
  for (const auto& [id, why] : sitting_out) {
    if (id != me) answers[id] = "benched " + why;
  }
  for (const BenchedNode& node : book.added) {
    if (options_.benched) options_.benched(node);
  }
  auto places = answer_records(count_key, answers, kLateMark);
  // Whoever gives the next round's seats starts from the seats' record; a round's node 0 that
  // starts it at once names its members from it.
  std::pair<std::string, std::string> seats_record = {elastic_key(round, "seats"), record.dump()};
  // Under etcd a round after the first starts on node 0's verdict, said as soon as it has its
  // seat (node_group_round_at_once.cpp): its key's answers go first, with the seats' record it
  // reads in its verdict's transaction. A launcher of that key counting meanwhile reads them
  // as it counts: "late".
  if (starts_at_once(round) && nodes > 0 && members.by_rank[0] != me) {
    const std::string first = place_key(round, members.by_rank[0]);
    auto node0 = std::find_if(places.begin(), places.end(),
                              [&first](const auto& place) { return place.first == first; });
    if (auto sent = control_->set_many({*node0, seats_record}); !sent) return sent.error();
    failpoint("seats-half-given");  // a test's fault: lost before the others' places
    places.erase(node0);
  } else {
    places.push_back(std::move(seats_record));
  }
  // The rest go with the count the round is closed at (one transaction under etcd), so that a
  // launcher counting meanwhile reads both or neither.
  places.emplace_back(elastic_key(round, "counted"), std::to_string(seen));
  places.emplace_back(std::string(kNextRoundKey), std::to_string(round + 1));
  if (auto placed = control_->set_many(places); !placed) return placed.error();
  if (sitting_out.contains(me)) {
    // Node 0's store's host sits out yet serves the store, and gives the next round's seats.
    if (host_) return keep_store_through(round, seats, who, sitting_out[me]);
    waits_benched(sitting_out[me]);
    return take_seat(round + 1);
  }
  if (!seats.contains(me)) {
    // etcd: a newcomer that claimed a round with the most nodes gave the seats, and waits.
    waits_as_spare("round " + std::to_string(round) + " has the most nodes (" +
                   std::to_string(range.max) + ")");
    return take_seat(round + 1);
  }
  Agreement seat = seated_at(round, seats[me], nodes, restarts_used);
  seat.spares = static_cast<int>(members.spares.size());
  return seat;
}

std::string NodeGroup::place_key(int round, long launcher) const {
  return RendezvousClient::answer_key(elastic_key(round, "count"), launcher);
}

}  // namespace aml
