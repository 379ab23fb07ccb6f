// One round of a launch (DESIGN §4): every local worker from start to end, and nothing of
// theirs left afterwards. A reactor: one loop owns time and file descriptors and hands each
// event to the component that owns it — the workers (spawn, reap), the output relay, the
// signal inbox (stops from outside), the peers (the node group), the hang watch and its
// inquiry — and the decisions are the verdict's (job_verdict.hpp).
#pragma once

#include <signal.h>

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "supervisor/hang_inquiry.hpp"
#include "supervisor/hang_watch.hpp"
#include "supervisor/job_verdict.hpp"
#include "supervisor/reactor.hpp"
#include "supervisor/run_workers.hpp"
#include "supervisor/signal_inbox.hpp"
#include "supervisor/straggler_check.hpp"
#include "supervisor/worker_output.hpp"
#include "supervisor/worker_set.hpp"

namespace aml {

class Round : private JobEffects {
 public:
  Round(const RunOptions& options, const sigset_t& original_mask, int signal_fd,
        const std::vector<std::unique_ptr<RankLog>>& log_files, Consoles& consoles);

  RunOutcome run(std::vector<WorkerLaunch> launches);

 private:
  using Clock = std::chrono::steady_clock;

  // JobEffects: what the verdict decides, done.
  void signal_workers(int sig) override { workers_.signal_all(sig); }
  std::optional<JobFailure> report_to_peers(const JobFailure& failure) override;

  bool start(WorkerLaunch launch, std::size_t index);
  bool running() const;
  void workers_gone();
  void sweep();
  void after_events(Clock::time_point now);
  std::optional<Clock::time_point> next_deadline(Clock::time_point now) const;
  void on_reaped(pid_t pid, int status, int index);
  void on_stop(int sig, long sender);
  void on_guardian_lost();
  bool listening() const { return options_.peers != nullptr && !verdict_.peers_done(); }
  void hear_peers(Clock::time_point now);
  // --hang-timeout (hang_watch.hpp, hang_inquiry.hpp).
  bool watching_for_hang() const;
  void watch_for_hang(Clock::time_point now);
  void begin_inquiry(Clock::time_point now);
  void follow_inquiry(Clock::time_point now);
  bool call_off_inquiry(std::string why, Clock::time_point now);
  bool hang_declared_elsewhere();
  RankLog* log_of(int rank) const;
  // Notices of the job's end (round_notices.cpp).
  void listen_for_notices();
  void hear_notices(Clock::time_point now);
  void pass_on(int sig);  // QUIT, USR1, USR2 (HUP too where it is --notice-signal)

  const RunOptions& options_;
  // This node's rank in the round: an elastic job's is the rendezvous' (options_ has none).
  const int node_rank_;
  const std::vector<std::unique_ptr<RankLog>>& log_files_;
  Consoles& consoles_;
  Reactor reactor_;
  JobVerdict verdict_;
  WorkerSet workers_;
  OutputRelay relay_;
  SignalInbox inbox_;
  HangWatch hang_watch_;
  std::optional<HangInquiry> inquiry_;
  StragglerCheck stragglers_;
  void check_stragglers(Clock::time_point now);
  std::vector<off_t> log_sizes_;  // stdout straight into a log file nobody reads: growth
  int first_failed_ = -1;         // index of the worker that failed first
  bool swept_ = false;
  bool told_success_ = false;
  bool reported_at_once_ = false;  // a stop came during the teardown: the report was said
  bool peers_readable_ = false;
};

}  // namespace aml
