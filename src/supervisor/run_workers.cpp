#include "supervisor/run_workers.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "events/event_log.hpp"
#include "notice/notice_desk.hpp"
#include "supervisor/guardian.hpp"
#include "supervisor/job_stops.hpp"
#include "supervisor/rank_log.hpp"
#include "supervisor/round.hpp"
#include "util/expand_fields.hpp"
#include "util/make_directories.hpp"

namespace aml {

std::string log_file_name(int rank) { return "std_log_process_" + std::to_string(rank) + ".txt"; }

std::string expand_tag(const std::string& tag_template, int rank, int local_rank) {
  return expand_fields(tag_template, {{"rank", rank}, {"local_rank", local_rank}});
}

namespace {

Error system_error(const std::string& what, const std::string& target) {
  return invalid(what, target, std::string("to work (") + std::strerror(errno) + ")");
}

// Signals that stop the job or are passed on to its workers.
constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

}  // namespace

RunOutcome run_workers(const LaunchFactory& launches, const RunOptions& options,
                       const RestartNotice& on_restart) {
  sigset_t handled;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  for (int sig : kStopSignals) sigaddset(&handled, sig);
  sigaddset(&handled, guardian_lost_signal());
  // Blocked and read from a signalfd in the event loop: no handler runs in the middle of
  // anything, and the workers get the original mask back.
  // As they were before an earlier call ended (below).
  for (int sig : kStopSignals) signal(sig, SIG_DFL);
  sigset_t original_mask;
  sigprocmask(SIG_BLOCK, &handled, &original_mask);
  // The workers' mask: the original, less the notice signal, which the launcher holds from
  // its start (launcher/main.cpp) so that one between rounds waits for the next.
  sigset_t workers_mask = original_mask;
  remove_job_stops(workers_mask);  // held by the launcher (job_stops.hpp), not by its workers
  if (options.notices && options.notices->settings().launcher_signal != 0)
    sigdelset(&workers_mask, options.notices->settings().launcher_signal);
  UniqueFd signal_fd(signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK));
  // Orphaned grandchildren are re-parented to us, so that we reap them (as PID 1 anyway).
  if (getpid() != 1) prctl(PR_SET_CHILD_SUBREAPER, 1);

  RunOutcome outcome;
  std::vector<std::unique_ptr<RankLog>> log_files;
  Consoles consoles;
  for (int restart = 0;; ++restart) {
    // No worker runs while the round is prepared (in a multi-node job the nodes meet then,
    // which may take long): signals act as usual, but the job's stops, held (job_stops.hpp):
    // the rendezvous's wait tells one at once, and one that comes as the workers start is read
    // from the signalfd, which stops them and tells it.
    sigprocmask(SIG_SETMASK, &original_mask, nullptr);
    auto made = launches(restart);
    sigprocmask(SIG_BLOCK, &handled, nullptr);
    if (!made) {
      int restarts_so_far = outcome.restarts;
      outcome = RunOutcome{};
      outcome.restarts = restarts_so_far;
      outcome.start_error = made.error();
      outcome.exit_code = 2;
      break;
    }
    if (made->ended) {
      outcome = *made->ended;
      break;
    }
    restart = made->restart_count;
    const int used = made->restarts_used;
    std::vector<WorkerLaunch> round_launches = std::move(made->workers);
    if (options.events) {
      options.events->set_round(restart);
      options.events->write("round_started", {{"workers", round_launches.size()},
                                              {"restarts_used", used},
                                              {"max_restarts", options.max_restarts}});
    }
    if (!options.output.log_dir.empty() && log_files.empty()) {
      if (!make_directories(options.output.log_dir)) {
        outcome.start_error = system_error("--log-dir", options.output.log_dir);
        outcome.exit_code = 2;
        break;
      }
      for (const WorkerLaunch& launch : round_launches) {
        std::string path = options.output.log_dir + "/" + log_file_name(launch.rank);
        log_files.push_back(RankLog::create(path));
        if (!log_files.back()) {
          outcome.start_error = system_error("log file", path);
          outcome.exit_code = 2;
          break;
        }
      }
      if (outcome.start_error) break;
    }
    Round round(options, workers_mask, signal_fd.get(), log_files, consoles);
    outcome = round.run(std::move(round_launches));
    outcome.restarts = used;
    // A round formed again without a member that never came uses no restart; but not after a
    // notice: the node goes away, and a loss then ends the job as preempted (job_verdict.cpp).
    const bool regroup = outcome.remote_failure && outcome.remote_failure->regroup &&
                         !outcome.first_failure && !outcome.stopped && !outcome.notice;
    if (regroup) {
      if (on_restart) on_restart(outcome, used);
      continue;
    }
    if (outcome.notice) {
      // The node goes away: no restart. Where the round had failed before the notice came and
      // a restart is left, the others go on without it (its notice told to a round they had
      // left): it ends preempted, as its machine does, and names the failure beside it.
      if (outcome.failed_before_notice && outcome.exit_code != 0 && !outcome.stopped &&
          !outcome.start_error && !outcome.hang && used < options.max_restarts) {
        outcome.exit_code = kPreemptedExitCode;
      }
      break;
    }
    bool failed = outcome.exit_code != 0 && !outcome.start_error;
    if (!failed || outcome.stop_requested || outcome.stopped || used >= options.max_restarts) break;
    if (on_restart) on_restart(outcome, used + 1);
    outcome.restarts = used + 1;
  }
  // The outcome is not told yet (the summary file, the report): a stop signal that comes now
  // (Slurm and scancel send TERM more than once) is the same stop, and must not end the
  // launcher before it has said so.
  for (int sig : kStopSignals) signal(sig, SIG_IGN);
  sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  return outcome;
}

}  // namespace aml
