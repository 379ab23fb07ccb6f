// What people and tools are told when a run ends: which rank on which node failed first, how,
// when, and the end of its stderr.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "supervisor/run_workers.hpp"

namespace aml {

struct NodeIdentity {
  int node_rank = 0;
  std::string host;
  int rank = -1;  // a per-process launch: this launcher's one rank (its member of the group)
};

// Lines for stderr; "" when the run succeeded.
std::string failure_summary_text(const RunOutcome& outcome, const NodeIdentity& node);
// Where a stop came while the workers were being stopped for a failure or a hang: the report
// so far, said at once (the sender may SIGKILL the launcher next, as mpirun does); else "".
std::string late_stop_text(const RunOutcome& outcome, const NodeIdentity& node);
// The --summary-file document, for a failed run and a clean one alike. `final` is false for
// the one written when a round failed and the workers are about to restart: a launcher that
// is killed after that leaves the last failure on record.
std::string run_summary_json(const RunOutcome& outcome, const NodeIdentity& node,
                             bool final = true);
// Its body: the exit code, the node, the restarts, the first failure, a stop, a hang, a notice,
// a start error and every worker's exit (the events' round_ended takes it too).
nlohmann::ordered_json outcome_json(const RunOutcome& outcome, const NodeIdentity& node);

// One worker's exit as the summary and the events give it: rank, local rank, pid, exit code or
// signal, status in words, time.
nlohmann::ordered_json exit_json(const WorkerExit& exit);

// "2026-11-22T03:04:05.678Z"
std::string utc_timestamp(std::chrono::system_clock::time_point when);

}  // namespace aml
