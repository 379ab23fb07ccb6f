// Run the local workers of a launch to the end (DESIGN §4): spawn each in its own process
// group, relay every output line, reap every child, forward signals, fail fast, restart.
#pragma once

#include <sys/types.h>

#include <aml/error.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "notice/notice.hpp"
#include "supervisor/hang_report.hpp"
#include "supervisor/job_failure.hpp"
#include "supervisor/job_stop.hpp"
#include "supervisor/spawn.hpp"

namespace aml {

class EventLog;

class PeerLink;
class NoticeDesk;

struct WorkerLaunch {
  int rank = -1;
  int local_rank = 0;
  std::vector<std::string> argv;
  std::vector<std::string> environ;
  // The launcher added PYTHONUNBUFFERED=1 (for the relay); dropped again where the worker
  // writes to the terminal itself.
  bool python_unbuffered_added = false;
  WorkerBinding binding;  // --bind: its CPUs and memory policy (empty: the launcher's)
};

struct OutputOptions {
  std::string tag_template;                          // "[rank {rank}] "-style prefix; "" for none
  std::optional<std::set<int>> console_local_ranks;  // only these on the console (all when empty)
  std::string log_dir;                               // per-rank log files here; "" for none
};

struct RunOutcome;

struct RunOptions {
  double term_timeout_seconds = 30;  // grace between SIGTERM and SIGKILL in a teardown
  int max_restarts = 0;
  OutputOptions output;
  PeerLink* peers = nullptr;  // the other nodes of a multi-node job; null on a single node
  // --hang-timeout (0: off), and where the workers' PyTorch makes its Flight Recorder pipes.
  double hang_timeout_seconds = 0;
  // A rank that has not shown its first progress is starting, not hung, until this long.
  double hang_startup_timeout_seconds = 0;
  std::string flight_recorder_pipe_prefix;
  std::string flight_recorder_dump_prefix;
  // Where the ranks' full stacks go when they have no log file.
  std::string hang_dir;
  // --straggler-check (0: off), --straggler-share, --bench-stragglers (straggler_check.hpp).
  double straggler_check_seconds = 0;
  double straggler_share = 0.2;
  bool bench_stragglers = false;
  int node_rank = 0;  // for the hang report
  // The report so far, said at once where a stop comes while the workers are being stopped
  // for a failure or a hang: its sender may SIGKILL the launcher next (mpirun does).
  std::function<std::string(const RunOutcome&)> report_at_once;
  // Notices of the job's end (notice_desk.hpp); null: none are listened for.
  NoticeDesk* notices = nullptr;
  // An elastic job: this launcher killed alone is a lost node, not the job's stop.
  bool guardian_loss_is_node_loss = false;
  // What starts at its first use rather than on the way to the workers' spawn (a workers' store
  // that its workers may never connect to): once a round's workers are started, each `fd` is
  // watched, and at its first readability (a connection) `start` is called, once. Asked for at
  // each round's start: a round's stores are its own.
  struct OnFirstUse {
    int fd = -1;
    std::function<void()> start;
  };
  std::function<std::vector<OnFirstUse>()> on_first_use;
  // --events-file (events/event_log.hpp); null: none are written.
  EventLog* events = nullptr;
};

struct WorkerExit {
  int rank = -1;
  int local_rank = 0;
  pid_t pid = 0;
  int wait_status = 0;
  std::chrono::system_clock::time_point when;
  std::vector<std::string> stderr_tail;  // its last lines of stderr
};

struct RunOutcome {
  // The first failure's, 128+N for signal N; 128+N of the signal that stopped the job when
  // nothing failed; else 0.
  int exit_code = 0;
  std::optional<WorkerExit> first_failure;
  // INT, TERM or HUP from outside stopped the job (here or on another node). A worker that
  // died of the stop is no failure; one that failed before it or during it still is.
  std::optional<JobStop> stopped;
  std::optional<Error> start_error;  // a worker, its log file or the rendezvous failed
  // Another node failed first (or was lost): this node's workers were stopped for it.
  std::optional<JobFailure> remote_failure;
  // No rank showed progress for --hang-timeout: what was seen, and the verdict.
  std::optional<HangReport> hang;
  int restarts = 0;
  std::vector<WorkerExit> exits;  // every worker of the last round
  bool stop_requested = false;    // TERM or INT told the launcher to stop: nothing may wait
  bool reported_at_once = false;  // the report was said when a stop came during the teardown
  // A notice ended the job (its workers finished after it, or were stopped at its deadline):
  // exit kPreemptedExitCode where nothing failed. Never restarted.
  std::optional<Notice> notice;
  bool stopped_at_notice_deadline = false;  // the workers were stopped at its deadline
  bool failed_before_notice = false;        // the round had failed (here or elsewhere) when it came
  // The job ended while this node waited for a round: its first failure and notice as the node
  // that ended it told them (its summary's "first_failure" and "notice", a JSON object), so that
  // every summary of the job names the same; "" where the job did not end so.
  std::string told_end;
};

// The workers of one round, as the launch factory gives them.
struct RoundLaunch {
  // The job's restart count for this round: the one asked for, or in an elastic job a later
  // one (a launcher that came late, or waited as a spare, joins the round that is starting).
  int restart_count = 0;
  // The rounds before this one that ended in a failure: what --max-restarts counts (an
  // elastic job's round ended to admit newcomers is not one).
  int restarts_used = 0;
  std::vector<WorkerLaunch> workers;
  // An elastic job ended while this launcher waited for a round: the run ends with this.
  std::optional<RunOutcome> ended;
};

// Called before every round with the restart count, to give the workers of that round (in a
// multi-node job, after the nodes met for it); an error ends the run.
using LaunchFactory = std::function<Result<RoundLaunch>(int restart_count)>;
// Called when a round failed and another is about to start.
using RestartNotice = std::function<void(const RunOutcome& failed_round, int next_restart)>;

RunOutcome run_workers(const LaunchFactory& launches, const RunOptions& options,
                       const RestartNotice& on_restart = {});

// "std_log_process_<rank>.txt", the Azure ML layout.
std::string log_file_name(int rank);
// The tag for one worker: "{rank}" and "{local_rank}" in the template are replaced.
std::string expand_tag(const std::string& tag_template, int rank, int local_rank);

}  // namespace aml
