#include "supervisor/job_verdict.hpp"

#include <signal.h>
#include <sys/wait.h>

#include "notice/notice_desk.hpp"
#include "supervisor/exit_status.hpp"

namespace aml {
namespace {

// What the other members are told of a stop of this launcher.
JobFailure stop_record(int sig, std::string status, const std::string& utc) {
  JobFailure record;
  record.stop_signal = sig;
  record.exit_code = 128 + sig;
  record.status = std::move(status);
  record.time = utc;
  return record;
}

}  // namespace

JobVerdict::JobVerdict(JobEffects& effects, Clock::duration grace, int member)
    : effects_(effects), grace_(grace), member_(member) {}

void JobVerdict::start_failed(Error error, Clock::time_point now) {
  outcome_.start_error = std::move(error);
  outcome_.exit_code = 127;  // as a shell reports a command it cannot run
  begin_teardown(now);
}

bool JobVerdict::worker_ended(const WorkerExit& exit,
                              const std::function<std::vector<std::string>()>& last_stderr,
                              Clock::time_point now) {
  --alive_;
  const int status = exit.wait_status;
  bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (outcome_.stopped) {
    const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && killed_;
    ++(killed ? outcome_.stopped->killed_after_grace : outcome_.stopped->ended_on_their_own);
    if (failed && ended_by_stop(status)) failed = false;
  }
  // Stopped at a notice's deadline: its TERM (or the SIGKILL after the grace) is no failure;
  // nor is a death of the signal the notice was told with.
  if (outcome_.stopped_at_notice_deadline && failed &&
      (ended_by_stop(status) || (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && killed_)))
    failed = false;
  if (outcome_.notice && failed && notice_signal_ != 0 && WIFSIGNALED(status) &&
      WTERMSIG(status) == notice_signal_)
    failed = false;
  // Ranks given SIGABRT for their stacks die of it: from then on the hang is the failure.
  if (hang_phase_ == HangPhase::committed || outcome_.hang) failed = false;
  if (!failed || outcome_.first_failure || outcome_.start_error || outcome_.remote_failure) {
    return false;
  }
  outcome_.first_failure = exit;
  outcome_.exit_code = exit_code_of(status);
  if (member_ >= 0) {
    WorkerExit told = exit;
    if (last_stderr) told.stderr_tail = last_stderr();
    tell_peers(job_failure_of(told, -1, {}));
  }
  begin_teardown(now);
  return true;
}

// INT, TERM or HUP sent to this launcher: the job stops, and that is no failure.
void JobVerdict::stop_from_outside(int sig, long sender_pid, const std::string& sender_name,
                                   const std::string& utc, Clock::time_point now) {
  stop_requested_ = true;
  if (++stop_signals_ > 1) {
    escalate_stop(now);
    return;
  }
  if (outcome_.stopped && !outcome_.stopped->from_here()) {
    // Another member's stop came first and this one is already stopping (a scheduler signals
    // every task): the first stays the one named, everywhere.
    outcome_.stopped->also_here = true;
    return;
  }
  // Also where every worker had ended: the launcher was stopped before it was done (the
  // console's catching up, the other nodes' end).
  JobStop stop;
  stop.signal = sig;
  stop.sender_pid = sender_pid;
  stop.sender = sender_name;
  stop.time = utc;
  auto first = tell_peers(
      stop_record(sig, "its launcher was stopped by " + signal_name(sig) + " from outside", utc));
  if (first && first->stop_signal != 0) {
    // Another member was stopped a moment before (a scheduler signals every task): that one is
    // named, here as there.
    stop.signal = first->stop_signal;
    stop.node_rank = first->node_rank;
    stop.host = first->host;
    stop.rank = first->rank;
    stop.time = first->time;
    stop.also_here = true;
  }
  start_stop(std::move(stop), now);
}

// The workers get the stop's own signal (a Python worker's KeyboardInterrupt handler runs)
// and the grace to end on their own; then SIGKILL.
void JobVerdict::start_stop(JobStop stop, Clock::time_point now) {
  stop.workers = alive_;
  stop.during_teardown = tearing_down_ && failed();
  stop_signal_ = stop.signal;
  // Stopping already with that signal (a failure's TERM): the stop is named, and the workers'
  // grace goes on without a second one (mpirun's TERM after a rank failed, passed on, was one).
  const bool pass_on = !tearing_down_ || !sent(stop_signal_);
  if (pass_on) stop.passed_on = stop_signal_;
  outcome_.stopped = std::move(stop);
  if (!tearing_down_) {
    tearing_down_ = true;
    deadline_ = now + grace_;
    signal_workers(SIGCONT);  // a stopped worker could not act on it
  }
  if (pass_on) signal_workers(stop_signal_);
}

// A second stop signal: TERM now (and a new grace) where the workers have not had it yet,
// else SIGKILL; a third: SIGKILL.
void JobVerdict::escalate_stop(Clock::time_point now) {
  if (killed_ || !tearing_down_) return;
  if (!sent(SIGTERM) && stop_signals_ == 2) {
    if (outcome_.stopped) outcome_.stopped->escalated_to = SIGTERM;
    deadline_ = now + grace_;
    signal_workers(SIGCONT);
    signal_workers(SIGTERM);
    return;
  }
  if (outcome_.stopped) outcome_.stopped->escalated_to = SIGKILL;
  killed_ = true;
  signal_workers(SIGKILL);
}

// The launcher's first process (its guardian) was killed, surely by SIGKILL: so are the
// workers, at once, and everything they started (the sweep).
void JobVerdict::guardian_lost(const std::string& utc, bool waiting_for_peers,
                               Clock::time_point now) {
  stop_requested_ = true;
  // Also once a teardown's workers have ended, before the round has: without the stop an
  // elastic launcher would end the job for every node with the failure it was tearing down
  // for (no restart after its own loss), where it should go as a lost node.
  if (alive_ > 0 || waiting_for_peers || tearing_down_) {
    JobStop stop;
    stop.signal = SIGKILL;
    stop.guardian_killed = true;
    stop.time = utc;
    if (!guardian_loss_is_node_loss_)
      tell_peers(stop_record(SIGKILL, "its launcher was killed", utc));
    if (!outcome_.stopped) start_stop(std::move(stop), now);
  }
  if (outcome_.stopped && !outcome_.stopped->guardian_killed) {
    outcome_.stopped->launcher_killed_at = utc;  // during a stop: named in its report
  }
  tearing_down_ = true;
  killed_ = true;
  signal_workers(SIGKILL);
}

void JobVerdict::peer_news(const PeerNews& news, Clock::time_point now) {
  if (!news.failure && !news.complete) return;
  peers_done_ = true;  // the link has said its last word
  if (!news.failure) return;
  const JobFailure& heard = *news.failure;
  // The first report in the job is the one every node names; it may be this node's own
  // failure or stop, heard back.
  const bool own = heard.member_or_node() == member_;
  if (own && (heard.stop_signal != 0 || heard.pid != 0)) return;
  if (heard.stop_signal != 0) {
    hear_stop(heard, now);
    return;
  }
  if (outcome_.first_failure || outcome_.remote_failure || outcome_.start_error) return;
  // Stopped here first: a launcher or the rendezvous lost after it is that stop (a scheduler
  // stops every node at once, and node 0's store goes with node 0), not the job's failure.
  if (outcome_.stopped && (heard.launcher_lost() || heard.rendezvous_lost())) return;
  // Hung and its ranks given SIGABRT: this node names the hang itself, as every node does.
  if (hang_phase_ == HangPhase::committed || outcome_.hang) return;
  // Reported before this node's stop, if any: a failure is still a failure.
  outcome_.remote_failure = heard;
  outcome_.exit_code = heard.exit_code;
  begin_teardown(now);
}

// Another node's launcher was stopped first: this node stops the same way (INT stays INT).
void JobVerdict::hear_stop(const JobFailure& heard, Clock::time_point now) {
  if (!outcome_.stopped &&
      (outcome_.first_failure || outcome_.remote_failure || outcome_.start_error)) {
    return;
  }
  JobStop stop = outcome_.stopped ? *outcome_.stopped : JobStop{};
  stop.node_rank = heard.node_rank;
  stop.host = heard.host;
  stop.rank = heard.rank;
  stop.time = heard.time;
  if (outcome_.stopped) {
    // Stopped here too, but that node's signal came first: it is the one named.
    stop.also_here = true;
    outcome_.stopped = std::move(stop);
    return;
  }
  stop.signal = heard.stop_signal;
  start_stop(std::move(stop), now);
}

void JobVerdict::hang_found(HangReport report, Clock::time_point now) {
  if (member_ >= 0) tell_peers(hang_failure(report));  // a node whose workers had finished
  outcome_.hang = std::move(report);
  outcome_.exit_code = kHangExitCode;
  begin_teardown(now);
}

void JobVerdict::notice_heard(const Notice& notice, std::optional<Clock::time_point> stop_at,
                              int told_with) {
  if (!notice.ends_the_job() || outcome_.notice) return;
  outcome_.notice = notice;
  outcome_.failed_before_notice = failed();
  notice_stop_at_ = stop_at;
  notice_signal_ = told_with;
}

void JobVerdict::tick(Clock::time_point now) {
  if (notice_stop_at_ && !tearing_down_ && now >= *notice_stop_at_) {
    // The node goes away at the deadline: what still runs is stopped now, with the grace.
    notice_stop_at_.reset();
    outcome_.stopped_at_notice_deadline = true;
    stop_signal_ = SIGTERM;
    begin_teardown(now);
    return;
  }
  if (tearing_down_ && !killed_ && now >= deadline_) {
    killed_ = true;
    signal_workers(SIGKILL);
  }
}

std::optional<JobVerdict::Clock::time_point> JobVerdict::deadline() const {
  if (tearing_down_ && !killed_ && alive_ > 0) return deadline_;
  if (!tearing_down_ && notice_stop_at_ && alive_ > 0) return notice_stop_at_;
  return std::nullopt;
}

RunOutcome JobVerdict::final_outcome() const {
  RunOutcome outcome = outcome_;
  // A round ended to form again (a node lost before it came: no restart used) is no failure of
  // the job's: a stop that comes meanwhile ends the job as a stop.
  const bool only_a_regroup = outcome.remote_failure && outcome.remote_failure->regroup &&
                              !outcome.first_failure && !outcome.start_error && !outcome.hang;
  if (outcome.stopped && (!failed() || only_a_regroup))
    outcome.exit_code = 128 + outcome.stopped->signal;
  // A notice came first: the node's end, and the scheduler's TERM that may follow, is it. So
  // is a node lost meanwhile, or the rendezvous (a launcher or etcd, not a worker: the
  // machines, as the notice is): the job cannot go on without a retry, which a scheduler gives
  // 200 and not 1; the loss is named beside it. A worker that fails after the notice stays a
  // failure, where it is the job's first; one here after the loss was reported
  // (remote_failure: the job's first) is not the verdict, and the nodes agree on it.
  const bool only_a_node_lost =
      outcome.remote_failure &&
      (outcome.remote_failure->launcher_lost() || outcome.remote_failure->rendezvous_lost()) &&
      !outcome.start_error && !outcome.hang;
  if (outcome.notice && (!failed() || only_a_node_lost)) outcome.exit_code = kPreemptedExitCode;
  // Its own launcher killed was the stop: 137 is what the scheduler sees of it, whatever the
  // job was ending for (the summary and the events say the same).
  if (outcome.stopped && outcome.stopped->guardian_killed) outcome.exit_code = 128 + SIGKILL;
  outcome.stop_requested = stop_requested_;
  return outcome;
}

// This node failed first (as far as it knows): the other members must stop too. Where another
// member's failure was reported a moment before, that one is the job's (one verdict): this
// node exits with its status and names it, its own failure coming second.
std::optional<JobFailure> JobVerdict::tell_peers(const JobFailure& failure) {
  if (member_ < 0 || peers_done_) return std::nullopt;
  auto first = effects_.report_to_peers(failure);
  if (!first || first->member_or_node() == member_) return std::nullopt;
  if (first->stop_signal != 0 || failure.stop_signal != 0 || outcome_.remote_failure ||
      outcome_.start_error || hang_phase_ == HangPhase::committed) {
    return first;
  }
  outcome_.remote_failure = *first;
  outcome_.exit_code = first->exit_code;
  return first;
}

void JobVerdict::begin_teardown(Clock::time_point now) {
  if (tearing_down_) return;
  tearing_down_ = true;
  deadline_ = now + grace_;
  signal_workers(SIGCONT);  // a stopped worker could not act on SIGTERM
  signal_workers(SIGTERM);
}

void JobVerdict::signal_workers(int sig) {
  if (sig > 0 && sig < 64) sent_signals_ |= 1ull << sig;
  effects_.signal_workers(sig);
}

// Ended by what the stop sent it: killed by that signal, or exited 128+N for it as shells
// and wrappers report it.
bool JobVerdict::ended_by_stop(int status) const {
  int sig = WIFSIGNALED(status)                              ? WTERMSIG(status)
            : WIFEXITED(status) && WEXITSTATUS(status) > 128 ? WEXITSTATUS(status) - 128
                                                             : 0;
  return stop_signal_ != 0 && sig > 0 && sig < 64 && sent(sig);
}

}  // namespace aml
