// While a round runs (DESIGN §5): this node's failure reported (the first one is the job's
// verdict), heartbeats and the loss of nodes or of the rendezvous itself, the abort key heard
// on the watch connection, the job's completion once every node's workers finished, and
// (node 0, --admit-newcomers at-once) a newcomer ending a round that lacks nodes.
#include <poll.h>

#include <algorithm>

#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {
using std::chrono::milliseconds;
using namespace group_timing;

namespace {

bool input_waiting(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

}  // namespace

JobFailure NodeGroup::lost_node(int member, const std::string& why) const {
  JobFailure f;
  f.member = member;
  const auto& nodes = agreement_.nodes;
  const NodeInfo* info = member == options_.self.node_rank ? &options_.self
                         : member < static_cast<int>(nodes.size())
                             ? &nodes[static_cast<std::size_t>(member)]
                             : nullptr;
  const bool per_process = options_.self.per_process();
  f.node_rank = info ? info->node() : per_process ? -1 : member;
  f.host = info ? info->host : member == 0 ? options_.master_addr : "";
  if (per_process) f.rank = member;  // that rank's launcher (no pid: not its worker)
  f.exit_code = 1;
  f.status = std::string(JobFailure::kLauncherLost) + ": " + why;
  f.time = utc_timestamp(std::chrono::system_clock::now());
  return f;
}

std::optional<JobFailure> NodeGroup::stored_failure_or(JobFailure fallback) {
  auto stored = write_round_end(to_json(fallback));
  if (stored) {
    // Node 0 wrote the job's completion first: every node's workers had finished well, and
    // nothing after it is a failure of the job's.
    if (*stored == kComplete) return std::nullopt;
    if (auto first = job_failure_from_json(*stored)) return first;
  }
  return fallback;
}

std::optional<JobFailure> NodeGroup::report(const JobFailure& failure) {
  JobFailure mine = failure;
  mine.member = options_.self.node_rank;
  mine.node_rank = options_.self.node();
  mine.host = options_.self.host;
  // Per process, a stop or a lost launcher is that rank's.
  if (options_.self.per_process() && mine.rank < 0) mine.rank = mine.member;
  // First come, first named: a report after another node's changes nothing. The reply holds
  // the job's verdict, whichever it is: this node has read it.
  auto stored = write_round_end(to_json(mine));
  // Node 0's store waits for its readers before it goes; etcd keeps the verdict.
  if (mine.member != 0 && !on_etcd()) (void)control_->set(node_key("heard", mine.member), "1");
  if (!stored || *stored == kComplete) return std::nullopt;
  return job_failure_from_json(*stored);
}

void NodeGroup::local_success() {
  finishing_ = true;
  (void)control_->set(node_key("done", options_.self.node_rank), "1");
  // Its workers all finished well: from here on its launcher going away costs the job nothing.
  // Except node 0's where it is not the store's host (etcd, or that host sits the round out):
  // it writes the job's completion, and its death must be heard.
  const bool writes_completion = options_.self.node_rank == 0;
  if (!host_ && !writes_completion) {
    clear_will(true);
    disarm_tripwire();
  }
  next_tick_ = Clock::now();  // look at once whether the others are done too
}

// Whether that node's workers all finished well (local_success): its going costs nothing.
Result<bool> NodeGroup::said_done(int node) { return control_->check({node_key("done", node)}); }

// Node 0: a follower the store has not heard from for --node-timeout is lost, unless it
// finished (and may have gone).
std::optional<JobFailure> NodeGroup::find_silent_node() {
  if (Clock::now() - agreed_at_ < options_.node_timeout) return std::nullopt;  // all renewing
  const auto asked = Clock::now();
  auto silent = control_->silent(options_.node_timeout);
  if (!silent) {
    // Node 0's own store: should not be. etcd: unreachable a moment (a member lost, a leader
    // being elected), or for good.
    if (host_) return lost_node(0, silent.error().message());
    return etcd_in_grace(asked) ? std::nullopt
                                : std::optional<JobFailure>(lost_contact(silent.error().message()));
  }
  // Named by round: a launcher of an earlier round still connected (one that was paused,
  // now waiting for a seat) is not this round's member of that rank.
  const std::string prefix = key("member/");
  for (const std::string& name : *silent) {
    if (!name.starts_with(prefix)) continue;
    const int node = std::atoi(name.c_str() + prefix.size());
    if (auto done = said_done(node); done && *done) continue;
    // A node that said it will pause (a Freeze) is given the pause too.
    if (const auto pause = freeze_allowance(node, Clock::now()); pause > Clock::duration::zero()) {
      auto longer =
          control_->silent(options_.node_timeout + std::chrono::duration_cast<milliseconds>(pause));
      if (longer && std::find(longer->begin(), longer->end(), name) == longer->end()) continue;
    }
    const std::string limit = seconds_text(options_.node_timeout);
    return stored_failure_or(lost_node(node, "no heartbeat for over " + limit +
                                                 " (--node-timeout " + limit +
                                                 "): paused, hung or cut off"));
  }
  return std::nullopt;
}

// etcd: a call failed, but etcd had answered within --node-timeout when it was made: a member
// lost or a leader being elected is not the rendezvous's loss; the next tick tries again. From
// when it was made: a call waits up to --node-timeout itself (on one member after another).
bool NodeGroup::etcd_in_grace(Clock::time_point asked) const {
  // A lease etcd said ended is no passing trouble: no grace (node_group_comeback.cpp).
  return on_etcd() && asked - last_answer_ < options_.node_timeout && !control_->lease_ended();
}

// A follower's heartbeat (under etcd every node's: its lease). Under node 0's store nothing is
// sent: the watch that asks again every watch_interval() is this node's sign of life to node 0,
// and its answers node 0's to this node (group_timing.hpp). It fails once node 0 is gone: its
// launcher died (the connection closed), or it did not answer for --node-timeout.
std::optional<JobFailure> NodeGroup::beat() {
  if (rewatch_) {  // etcd: the watch on the abort key broke a moment ago
    const auto asked = Clock::now();
    if (auto again = watch_->start_get(key("abort"), watch_interval()); again) {
      rewatch_ = false;
    } else if (!etcd_in_grace(asked)) {
      return lost_contact(again.error().message());
    }
  }
  if (!on_etcd()) {
    last_contact_ = Clock::now();  // this node runs: a silence from here on is node 0's
    // The store has not answered the watch's wait for --node-timeout after the answer was due
    // (its timeout): node 0's launcher is stopped or starved, or its host cut off (unless this
    // node was).
    const auto due = last_answer_ + watch_interval() + kLateAnswer;
    if (last_contact_ - due >= options_.node_timeout + freeze_allowance(0, last_contact_) &&
        own_pause_ < options_.node_timeout) {
      const std::string limit = seconds_text(options_.node_timeout);
      return lost_node(0, "its store did not answer for over " + limit + " (--node-timeout " +
                              limit + "): paused, hung, starved or cut off");
    }
    return std::nullopt;
  }
  const auto asked = Clock::now();
  auto sent = control_->heartbeat();
  if (!sent) {
    if (etcd_in_grace(asked)) return std::nullopt;
    return lost_contact("no heartbeat taken for --node-timeout " +
                        seconds_text(options_.node_timeout) + " (" + sent.error().message() +
                        "): paused, hung, cut off or gone");
  }
  last_contact_ = Clock::now();
  if (*sent) last_answer_ = last_contact_;  // etcd itself answered
  // A stream on an etcd member that stopped serving hears nothing more: it moves to one that
  // serves (etcd_stream_member.cpp). One that cannot move now is tried again at the next beat.
  if (watch_) (void)watch_->keep_streams();
  if (notice_watch_) (void)notice_watch_->keep_streams();
  return std::nullopt;
}

void NodeGroup::clear_will(bool gone_too) {
  if (!gone_too) {
    (void)control_->clear_last_will();
    return;
  }
  gone_will_set_ = false;
  (void)control_->clear_lasting_will();
}

PeerNews NodeGroup::hear_abort() {
  PeerNews news;
  const auto asked = Clock::now();
  auto heard = watch_->finish_get();
  if (!heard) {
    if (etcd_in_grace(asked)) {
      rewatch_ = true;  // beat() watches again
      return news;
    }
    news.failure =
        lost_contact("the connection to the rendezvous closed (" + heard.error().message() + ")");
    return news;
  }
  last_contact_ = last_answer_ = Clock::now();
  if (!*heard) {
    // The long wait ended with nothing to say: wait again.
    if (auto again = watch_->start_get(key("abort"), watch_interval()); !again) {
      if (etcd_in_grace(asked)) {
        rewatch_ = true;
      } else {
        news.failure = lost_contact(again.error().message());
      }
    }
    return news;
  }
  return news_of(**heard);
}

PeerNews NodeGroup::news_of(const std::string& verdict) {
  PeerNews news;
  if (verdict == kComplete) {
    // Node 0 wrote it and waits for the goodbyes (finishing_news).
    if (options_.self.node_rank == 0) return news;
    clear_will(true);  // leaving on purpose
    (void)control_->set(node_key("goodbye", options_.self.node_rank), "1");
    news.complete = true;
    return news;
  }
  // Node 0 keeps the store up until every node has read this (etcd keeps it anyway: a thousand
  // writes fewer).
  if (!on_etcd()) (void)control_->set(node_key("heard", options_.self.node_rank), "1");
  auto failure = job_failure_from_json(verdict);
  news.failure = failure ? *failure : lost_node(0, "it sent an unreadable failure report");
  return news;
}

// Node 0, its own workers done: once every node's are, the job is complete; the store stays
// up until each has said goodbye (or a short while).
PeerNews NodeGroup::finishing_news(Clock::time_point now) {
  PeerNews news;
  if (!all_done_) {
    auto done = all_exist("done");
    if (!done || !*done) return news;
    auto verdict = control_->compare_set(key("abort"), "", kComplete);
    if (verdict && *verdict != kComplete) {
      // A failure came first after all.
      auto failure = job_failure_from_json(*verdict);
      news.failure = failure ? *failure : lost_node(0, "an unreadable failure report");
      return news;
    }
    (void)control_->set(node_key("goodbye", 0), "1");  // node 0 waits for no goodbye of its own
    all_done_ = true;
    goodbye_deadline_ = now + kGoodbyeWait;
  }
  auto gone = all_exist("goodbye");
  news.complete = (gone && *gone) || now >= goodbye_deadline_;
  return news;
}

JobFailure NodeGroup::lost_contact(const std::string& why) {
  // Its last answer came long ago, or this node itself just did not run for that long. Under
  // etcd, only the latter: a member of etcd's that does not answer is etcd's loss, not this
  // node's (a node cut off from etcd cannot tell which).
  const auto unanswered = on_etcd() ? Clock::duration{} : Clock::now() - last_contact_;
  const auto silent = std::max<Clock::duration>(unanswered, own_pause_);
  if (silent >= options_.node_timeout) {
    counted_lost_ = true;
    return lost_node(options_.self.node_rank,
                     "this node was silent for " +
                         seconds_text(std::chrono::duration_cast<milliseconds>(silent)) +
                         " (a paused VM, a starved host: over --node-timeout " +
                         seconds_text(options_.node_timeout) + "), and the job went on without it");
  }
  // Node 0's store is node 0's launcher, unless its host sits the round out.
  if (!on_etcd()) return node0_serves_own_store() ? lost_rendezvous(why) : lost_node(0, why);
  JobFailure lost = lost_rendezvous(why);
  // To its members node 0 is lost, as by its closing, and they go on as they would (a new
  // round, where etcd answers them); its reason comes with it.
  if (options_.self.node_rank == 0) tell_members(to_json(lost_node(0, lost.status)));
  keep_unwritten_end(to_json(lost));  // the round ends here; etcd could not be told
  return lost;
}

JobFailure NodeGroup::lost_rendezvous(const std::string& why) const {
  JobFailure f;
  f.host =
      options_.backend.describe(options_.master_addr + ":" + std::to_string(options_.master_port));
  f.exit_code = 1;
  f.status = std::string(JobFailure::kRendezvousLost) + ": " + f.host +
             " could not be reached for --node-timeout " + seconds_text(options_.node_timeout) +
             " (" + why + ")";
  f.time = utc_timestamp(std::chrono::system_clock::now());
  return f;
}

// The notice (node_group_notices.cpp) comes beside whatever else the round has to say.
PeerNews NodeGroup::poll(bool readable) {
  std::optional<Notice> notice;
  if (readable && notice_watch_ && input_waiting(notice_watch_->fd())) notice = hear_notice();
  if (notice && notice->ends_the_job()) notice_heard_ = true;
  PeerNews news = poll_round(readable);
  news.notice = std::move(notice);
  return news;
}

PeerNews NodeGroup::poll_round(bool readable) {
  PeerNews news;
  const auto polled = Clock::now();
  const auto gap = polled - last_poll_;
  // The gap is counted from the end of the last poll: a call of its own that waited on etcd
  // (up to --node-timeout, one member after another) is no pause of this node.
  struct PollEnd {
    Clock::time_point& at;
    ~PollEnd() { at = Clock::now(); }
  } poll_end{last_poll_};
  const bool leader = options_.self.node_rank == 0;
  if (leader && gap >= options_.node_timeout + freeze_allowance(0, polled)) {
    // Node 0 waits on nothing remote: a gap this long is its own (a paused VM), and the other
    // nodes have counted it lost meanwhile. Launchers that its store found gone when it ran
    // again left because of that silence: it names itself, not them.
    const JobFailure paused =
        lost_node(0, "this node was silent for " +
                         seconds_text(std::chrono::duration_cast<milliseconds>(gap)) +
                         " (a paused VM, a starved host: over --node-timeout " +
                         seconds_text(options_.node_timeout) + ")");
    news.failure = stored_failure_or(paused);
    if (news.failure && news.failure->pid == 0 && news.failure->stop_signal == 0)
      news.failure = paused;
    return news;
  }
  // This node did not run for a while (paused, starved): if node 0 is gone now, it may have
  // counted this node lost meanwhile.
  if (gap >= beat_interval()) own_pause_ = gap;
  if (tripwire_due_) arm_tripwire();
  if (readable && tripwire_ && input_waiting(tripwire_->fd())) {
    news = hear_tripwire();
    if (news.failure || news.complete) return news;
  }
  if (readable && watch_ && (!events_ || input_waiting(watch_->fd()))) {
    news = hear_abort();
    if (news.failure || news.complete) return news;
  }
  const auto now = Clock::now();
  if (heard_verdict_ && now >= write_heard_at_) return write_heard();  // nobody wrote it
  if (now < next_tick_) return news;
  next_tick_ = now + (leader && finishing_ ? kFinishTick : beat_interval());
  if (next_seat_due_) watch_next_seat();
  // Under etcd node 0 holds a lease like every node: it beats too; and so does a node 0 that
  // is not the store's host (it sits the round out), to hear that store's silence.
  news.failure = host_ ? std::nullopt : beat();
  if (leader && !news.failure) news.failure = find_silent_node();
  if (leader && !news.failure) news.failure = gone_member();
  if (leader && !news.failure) news.failure = admit_newcomers();
  if (news.failure || !leader || !finishing_) return news;
  return finishing_news(now);
}

// Node 0 while a round with fewer than the most nodes runs: a launcher waiting for the next
// round ends this one (all nodes stop their workers and meet again at once). Not once a notice
// ends the job: its workers save and leave, and no round comes after.
std::optional<JobFailure> NodeGroup::admit_newcomers() {
  if (!options_.elastic || !options_.admit_at_once || finishing_ || notice_heard_ ||
      options_.self.nnodes >= options_.elastic->max) {
    return std::nullopt;
  }
  auto waiting = control_->add(elastic_key(round_ + 1, "count"), 0);
  if (!waiting || *waiting == 0) return std::nullopt;
  JobFailure regroup = lost_node(0, "");
  regroup.regroup = true;
  regroup.exit_code = 0;
  regroup.status = "it ends round " + std::to_string(round_) + " to admit " +
                   std::to_string(*waiting) + " node(s) that came (--admit-newcomers at-once)";
  return stored_failure_or(regroup);
}

}  // namespace aml
