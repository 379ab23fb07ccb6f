// The look at a hung job's ranks on this node (DESIGN §6), from the moment the watch finds the
// job hung until the verdict: first /proc, py-spy and gdb (every rank at once, bounded) and
// the NCCL Flight Recorder's dump pipes; then the Python ranks py-spy could not read get
// SIGABRT, and faulthandler (PYTHONFAULTHANDLER, set for the workers) writes their stacks to
// their stderr as they die; the inquiry waits for those a few seconds at most.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "supervisor/hang_report.hpp"

namespace aml {

class HangInquiry {
 public:
  using Clock = std::chrono::steady_clock;

  struct Target {
    std::size_t worker = 0;  // its index in the round
    int rank = -1;
    int local_rank = 0;
    int node_rank = 0;
    pid_t worker_pid = 0;
    std::int64_t step = -1;
    double cpu_seconds = 0;
    double interval_seconds = 0;
  };

  // Looks at every target at once (this takes up to the tools' time limit).
  HangInquiry(std::vector<Target> targets, double timeout_seconds,
              const std::string& flight_recorder_pipe_prefix,
              const std::string& flight_recorder_dump_prefix);

  // The workers whose Python stacks must come from faulthandler: the caller captures their
  // stderr, then sends their rank process SIGABRT.
  struct Abort {
    std::size_t worker;
    pid_t pid;
  };
  const std::vector<Abort>& faulthandler_aborts() const { return aborts_; }
  Clock::time_point deadline() const { return deadline_; }
  // The SIGABRTs go out now (after the other nodes' looks): their wait starts now.
  void restart_faulthandler_clock();
  // What worker `worker` wrote on stderr after its SIGABRT.
  void faulthandler_text(std::size_t worker, std::string text);
  // This node's part, its verdict over this node's ranks alone.
  HangReport report() const;

 private:
  std::vector<Target> targets_;
  std::vector<RankLook> looks_;  // by target
  std::vector<Abort> aborts_;
  double timeout_seconds_;
  Clock::time_point deadline_;
};

// Asks each local rank's PyTorch for its NCCL Flight Recorder dump: writes to the pipe it
// made at PREFIX<rank>.pipe (TORCH_NCCL_DEBUG_INFO_PIPE_FILE); the dump goes to
// DUMP_PREFIX<rank> (TORCH_NCCL_DEBUG_INFO_TEMP_FILE), waited for a few seconds at most before
// anything stops the ranks. Returns how many pipes took it.
int request_flight_recorder_dumps(const std::string& pipe_prefix, const std::string& dump_prefix,
                                  const std::vector<int>& ranks);

}  // namespace aml
