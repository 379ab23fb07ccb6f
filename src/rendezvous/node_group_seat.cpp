// Elastic membership from a waiting launcher's side (DESIGN §5): it takes a number for the job
// once, then a slot in a round, and waits for the seat that round's coordinator gives it (a
// node rank, or "spare": it waits for the next round). Under etcd, a launcher that finds nobody
// giving a round's seats (or the one who claimed it lost) gives them itself. And the job's
// end, told to the launchers still waiting.
#include <algorithm>
#include <cstdio>

#include "rendezvous/elastic_keys.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;
using namespace elastic_keys;

void NodeGroup::waits_as_spare(const std::string& why) {
  if (!said_spare_ && options_.say) {
    options_.say("aml-launch: " + options_.self.host + ": " + why +
                 ": this node waits for the next round as a hot spare\n");
  }
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

Result<Agreement> NodeGroup::take_seat(int round) {
  if (auto id = launcher_number(); !id) return id.error();
  // While it waits, its death takes it out of the next round (node 0 does not wait for it).
  if (auto will = control_->set_last_will(gone_key(launcher_id_), "1"); !will) return will.error();
  auto waits = [this](const std::string& why) { waits_as_spare(why); };
  auto next = control_->get(kNextRoundKey, milliseconds(0));
  if (!next) return next.error();
  if (*next && std::atoi((*next)->c_str()) > round) {
    round = std::atoi((*next)->c_str());
    if (launcher_id_ > 0 && round_ < 0) waits("round " + std::to_string(round - 1) + " runs");
  }
  const std::string me = std::to_string(launcher_id_);
  for (;; ++round) {
    auto slot = control_->add(elastic_key(round, "count"), 1);
    if (!slot) return slot.error();
    const std::int64_t mine = *slot - 1;
    if (auto set = control_->set(
            elastic_key(round, "slot/" + std::to_string(mine)),
            me + " " + options_.self.host + " " + std::to_string(options_.self.node_rank));
        !set) {
      return set.error();
    }
    std::optional<std::string> counted;
    for (bool first_look = true; !counted || *counted == kEndedMark; first_look = false) {
      // etcd: nobody gives this round's seats yet, or the one who claimed it was lost.
      if (coordinates(round, first_look)) return decide_members(round);
      // Node 0 writes the count when it seated the round, or the end mark when the job
      // ended; the end key is also read after each long wait, for a slot taken after that.
      // Under etcd each look is a read and a watch of etcd's for every waiting launcher; a
      // coordinator lost meanwhile is known only when its lease ends (--node-timeout) anyway.
      const milliseconds wait = on_etcd() ? std::max(kSeatWait, options_.node_timeout) : kSeatWait;
      auto looked = control_->get(elastic_key(round, "counted"), wait);
      if (!looked) {
        Error error = looked.error();
        error.expected += on_etcd()
                              ? " (etcd could not be reached while this node waited for "
                                "round " +
                                    std::to_string(round) + ")"
                              : " (node 0's store went away while this node waited for "
                                "round " +
                                    std::to_string(round) + ": node 0 was lost, or the job ended)";
        return error;
      }
      counted = *looked;
      if (counted && *counted != kEndedMark) break;
      auto ended = control_->get(kJobEndKey, milliseconds(0));
      if (ended && *ended) {
        (void)control_->set(end_read_key(launcher_id_), "1");
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
    auto place = control_->get(elastic_key(round, "place/" + me), milliseconds(0));
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
  // Node 0's store's host says it; under etcd every member of the last round does (the first
  // one is kept), since any of them may be lost.
  // Under etcd a fixed-size job says it too: its id may be used again.
  const bool tells = on_etcd() ? options_.self.node_rank >= 0 : host_ != nullptr;
  if ((!options_.elastic && !on_etcd()) || !tells) return;
  (void)control_->compare_set(kJobEndKey, "", std::to_string(exit_code) + "\n" + said);
  // The launchers waiting for the next round read it before the store goes away.
  auto next = control_->get(kNextRoundKey, milliseconds(0));
  if (!next || !*next) return;
  const int round = std::atoi((*next)->c_str());
  // Wakes the launchers that wait for this round's seats.
  (void)control_->set(elastic_key(round, "counted"), std::string(kEndedMark));
  if (!host_) return;  // etcd keeps the news for the launchers that come to read it
  auto count = control_->add(elastic_key(round, "count"), 0);
  if (!count || *count == 0) return;
  std::vector<std::string> slots;
  for (std::int64_t k = 0; k < *count && slots.size() < kKeysPerCall; ++k) {
    slots.push_back(elastic_key(round, "slot/" + std::to_string(k)));
  }
  auto ids = control_->get_all(slots, milliseconds(0));
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
