// The decisions of one round (DESIGN §4) as a state machine fed with events: which failure is
// the first, a stop or a failure, when the teardown escalates, the exit status. It starts no
// process and reads no clock: time comes with the events, and what it decides to do goes out
// through JobEffects, so that every order of events can be tested without a process.
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/peer_link.hpp"
#include "supervisor/run_workers.hpp"

namespace aml {

class JobEffects {
 public:
  virtual ~JobEffects() = default;
  // killpg of every worker still running.
  virtual void signal_workers(int sig) = 0;
  // Tells the other members; gives the job's first report where it is another member's.
  // Called only where there are peers and their link has not said its last word.
  virtual std::optional<JobFailure> report_to_peers(const JobFailure& failure) = 0;
};

// Where a hang inquiry stands, as far as the decisions care.
enum class HangPhase {
  none,       // no inquiry
  looking,    // the ranks are looked at, unharmed: anything else that happens comes first
  committed,  // the ranks were given SIGABRT for their stacks: every death is the hang's
};

class JobVerdict {
 public:
  using Clock = std::chrono::steady_clock;

  // `member`: this launcher's index in the job's group (-1: no peers).
  JobVerdict(JobEffects& effects, Clock::duration grace, int member);

  // Events.
  void worker_started() { ++alive_; }
  void start_failed(Error error, Clock::time_point now);
  // `last_stderr` gives the worker's last lines of stderr (asked only where the news goes to
  // the other members). True when this is the round's first failure.
  bool worker_ended(const WorkerExit& exit,
                    const std::function<std::vector<std::string>()>& last_stderr,
                    Clock::time_point now);
  // INT, TERM or HUP sent to this launcher.
  void stop_from_outside(int sig, long sender_pid, const std::string& sender_name,
                         const std::string& utc, Clock::time_point now);
  void guardian_lost(const std::string& utc, bool waiting_for_peers, Clock::time_point now);
  // An elastic job: a launcher killed alone is a lost node (DESIGN §5), not a stop of the job;
  // its peers hear it from its connections closing, as from any lost launcher's.
  void guardian_loss_is_node_loss() { guardian_loss_is_node_loss_ = true; }
  void peer_news(const PeerNews& news, Clock::time_point now);
  void hang_phase(HangPhase phase) { hang_phase_ = phase; }
  void hang_found(HangReport report, Clock::time_point now);
  // A notice that ends the job (notice_desk.hpp): the workers were told (with signal
  // `told_with`, 0: none; a worker that dies of it, as one that does not handle SIGUSR1 does,
  // ended for the notice); those still running at `stop_at` (its deadline less the grace;
  // nullopt: none said) are stopped then, as by a TERM, and the job ends as preempted where
  // nothing failed.
  void notice_heard(const Notice& notice, std::optional<Clock::time_point> stop_at,
                    int told_with = 0);
  // Time passed: SIGKILL once the grace is over.
  void tick(Clock::time_point now);

  // What was decided.
  const RunOutcome& outcome() const { return outcome_; }
  // The round's outcome with the exit status of a stop where nothing failed.
  RunOutcome final_outcome() const;
  bool failed() const {
    return outcome_.first_failure || outcome_.remote_failure || outcome_.start_error ||
           outcome_.hang;
  }
  bool tearing_down() const { return tearing_down_; }
  bool killed() const { return killed_; }
  bool stop_requested() const { return stop_requested_; }
  // The peers' link said its last word (a failure, or the job complete).
  bool peers_done() const { return peers_done_; }
  std::optional<Clock::time_point> deadline() const;
  int alive() const { return alive_; }
  HangPhase hang_phase() const { return hang_phase_; }
  // This node's workers all finished well: it waits for the other nodes' to.
  bool waiting_for_peers() const {
    return member_ >= 0 && !peers_done_ && outcome_.exit_code == 0 && !outcome_.start_error &&
           !stop_requested_;
  }

 private:
  void begin_teardown(Clock::time_point now);
  void start_stop(JobStop stop, Clock::time_point now);
  void escalate_stop(Clock::time_point now);
  void hear_stop(const JobFailure& heard, Clock::time_point now);
  std::optional<JobFailure> tell_peers(const JobFailure& failure);
  void signal_workers(int sig);
  bool sent(int sig) const { return (sent_signals_ & (1ull << sig)) != 0; }
  bool ended_by_stop(int status) const;

  JobEffects& effects_;
  Clock::duration grace_;
  int member_;
  RunOutcome outcome_;
  int alive_ = 0;
  bool tearing_down_ = false;
  bool killed_ = false;
  bool stop_requested_ = false;
  bool peers_done_ = false;
  bool guardian_loss_is_node_loss_ = false;
  int stop_signals_ = 0;            // INT, TERM and HUP this launcher got
  int stop_signal_ = 0;             // the one that stopped the job (here or on another node)
  std::uint64_t sent_signals_ = 0;  // bit N: the workers were sent signal N
  HangPhase hang_phase_ = HangPhase::none;
  Clock::time_point deadline_;
  std::optional<Clock::time_point> notice_stop_at_;
  int notice_signal_ = 0;  // what the workers were told the notice with
};

}  // namespace aml
