// Run a set of local workers to the end: spawn, reap, forward signals, fail fast.
// This is the first cut of DESIGN §4; output relay and per-rank logs come later.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

#include "supervisor/spawn.hpp"

namespace aml {

struct WorkerLaunch {
  int rank = -1;
  int local_rank = 0;
  std::vector<std::string> argv;
  std::vector<std::string> environ;
};

struct WorkerExit {
  int rank = -1;
  int local_rank = 0;
  pid_t pid = 0;
  int wait_status = 0;
};

struct RunOutcome {
  int exit_code = 0;  // the first failure's, 128+N for signal N; else 0
  std::optional<WorkerExit> first_failure;
  std::optional<Error> spawn_error;  // a worker could not be started at all
};

struct RunOptions {
  double term_timeout_seconds = 30;  // grace between SIGTERM and SIGKILL in a teardown
};

RunOutcome run_workers(const std::vector<WorkerLaunch>& workers, const RunOptions& options);

}  // namespace aml
