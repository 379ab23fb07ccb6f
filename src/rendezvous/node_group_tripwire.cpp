// A launcher that dies is heard at once under etcd too (DESIGN §5). etcd knows a launcher only
// by its lease, which ends --node-timeout after the last renewal; but a launcher killed, crashed
// or taken by the OOM killer on a host that lives closes its sockets at once. So each member of
// a round holds a connection to the store this round's node 0 serves its workers, with a last
// will there: a member's closed connection sets it (every member hears it), node 0's closing
// is heard by every member. The first to hear writes the loss as the round's verdict in etcd,
// where every node reads it. A host that vanishes whole (power, network) still goes by its
// lease.
#include <sys/epoll.h>

#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {
namespace {

constexpr std::string_view kTripKey = "aml/tripwire";
// Set by a member as it arms its tripwire: it came to the round (node_group_round_at_once.cpp).
std::string came_key(int member) { return "aml/came/" + std::to_string(member); }
// The others write a loss they heard after this, if nobody has (group_timing::kLastPromptRank).
constexpr std::chrono::milliseconds kLateWritersGrace{300};

void watch_for_input(int epoll, int fd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = fd;
  epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

}  // namespace

// The round's descriptor, which the supervisor waits on: the watch's and the notice watch's
// now, the tripwire's once it is armed.
void NodeGroup::open_events() {
  events_.reset();
  tripwire_due_ = false;
  if (!watch_ || (!on_etcd() && !notice_watch_)) return;
  events_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  watch_for_input(events_.get(), watch_->fd());
  if (notice_watch_) watch_for_input(events_.get(), notice_watch_->fd());
  if (!on_etcd()) return;
  // The watch's upkeep (opened again, the session tended) waits on etcd no longer than this:
  // etcd's silence is judged from its last answer (etcd_in_grace), and a call that waited out
  // --node-timeout would keep the tripwire, the workers and signals unheard meanwhile.
  watch_->set_reply_timeout(group_timing::kShortestReplyTimeout);
  tripwire_due_ = true;
  next_seat_due_ = options_.elastic.has_value();
}

// Armed at the round's first poll, once the workers run: a thousand members connect to node 0's
// store at once, and its handshakes one after another must hold no worker's start back.
void NodeGroup::arm_tripwire() {
  tripwire_due_ = false;
  disarm_tripwire();
  if (!events_ || agreement_.worker_store_port == 0) return;
  const bool leader = options_.self.node_rank == 0;
  if (!leader && agreement_.nodes.empty()) return;
  const std::string host = leader ? options_.self.addr : agreement_.nodes.front().addr;
  const std::string member = member_name(options_.self);
  auto connect = [&] {
    return StoreClient::connect(host, agreement_.worker_store_port, options_.token,
                                options_.auth.launcher_credentials(options_.token, member),
                                group_timing::kShortestReplyTimeout);
  };
  // Without them, the lease alone tells a launcher's loss: slower, never wrong.
  auto listening = connect();
  if (!listening || !listening->start_get(kTripKey, watch_interval())) return;
  if (!leader) {  // node 0's will would fire in its own store, which goes with it
    auto will = connect();
    if (!will) return;
    JobFailure died =
        lost_node(options_.self.node_rank, "it died (its connection to round " +
                                               std::to_string(round_) + "'s node 0 closed)");
    died.time.clear();  // not known when it is written
    if (!will->set(came_key(options_.self.node_rank), "1")) return;
    if (!will->set_last_will(kTripKey, to_json(died))) return;
    tripwire_will_.emplace(std::move(*will));
  }
  tripwire_.emplace(std::move(*listening));
  watch_for_input(events_.get(), tripwire_->fd());
}

// Node 0: a connection of its own to the store it serves this round's workers.
Result<StoreClient> NodeGroup::own_store() const {
  return StoreClient::connect(
      options_.self.addr, agreement_.worker_store_port, options_.token,
      options_.auth.launcher_credentials(options_.token, member_name(options_.self)),
      group_timing::kShortestReplyTimeout);
}

// Node 0: whether a member armed its tripwire in this round (its store says so). Unknown (no
// store, or it does not answer) counts as come.
bool NodeGroup::came_to_round(int member) {
  if (!workers_store_) return true;
  auto own = own_store();
  if (!own) return true;
  auto came = own->check({came_key(member)});
  return !came || *came;
}

void NodeGroup::tell_members(const std::string& verdict) {
  if (!workers_store_ || !tripwire_) return;  // no tripwire armed: none listens
  auto own = own_store();
  if (own) (void)own->set(kTripKey, verdict);
}

// The round's descriptor (events_) stays: the supervisor waits on it until the round ends.
void NodeGroup::disarm_tripwire() {
  tripwire_.reset();
  heard_verdict_.reset();
  if (!tripwire_will_) return;
  (void)tripwire_will_->clear_last_will();  // a connection closed on purpose is no loss
  tripwire_will_.reset();
}

PeerNews NodeGroup::hear_tripwire() {
  PeerNews news;
  auto heard = tripwire_->finish_get();
  if (heard && !*heard) {  // the long wait ended with nothing: wait again
    if (!tripwire_->start_get(kTripKey, watch_interval())) disarm_tripwire();
    return news;
  }
  const bool leader = options_.self.node_rank == 0;
  // The listening connection is done; this launcher's will stays until the next join or its
  // end takes it back (closed now, it would name this live launcher).
  tripwire_.reset();
  std::string verdict;
  if (heard) {
    verdict = **heard;  // a member's last will: it died
  } else if (leader) {
    return news;  // its own store failed it: the lease still tells
  } else {
    JobFailure died = lost_node(0, "it died (its store's connection closed)");
    verdict = to_json(died);
  }
  // Every member hears it at the same moment: the round's first few write the verdict at
  // once, the others give them a moment to (their write comes on the watch), not a thousand
  // raft rounds for one key.
  heard_verdict_ = verdict;
  if (options_.self.node_rank > group_timing::kLastPromptRank) {
    write_heard_at_ = Clock::now() + kLateWritersGrace;
    next_tick_ = std::min(next_tick_, write_heard_at_);
    return news;
  }
  return write_heard();
}

// First come, first named: the job's verdict is whatever etcd holds first.
PeerNews NodeGroup::write_heard() {
  const std::string verdict = *heard_verdict_;
  heard_verdict_.reset();
  auto stored = write_round_end(verdict);
  return news_of(stored ? *stored : verdict);
}

}  // namespace aml
