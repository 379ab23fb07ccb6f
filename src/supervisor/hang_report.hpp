// What the launcher saw of a hung job (DESIGN §6): every rank of this node looked at (its
// /proc state, its stacks, where its main thread is), and the verdict over the whole job.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "flight/collective_verdict.hpp"
#include "supervisor/hang_verdict.hpp"
#include "supervisor/job_failure.hpp"
#include "supervisor/proc_state.hpp"

namespace aml {

struct RankLook {
  int rank = -1;
  int local_rank = 0;
  int node_rank = 0;
  pid_t pid = 0;  // the rank's process (under a shell: the shell's command)
  ProcState proc;
  double cpu_seconds = 0;  // in the last interval before the hang was found
  double interval_seconds = 0;
  std::int64_t step = -1;     // its last aml_launch.progress(step)
  std::string python_stacks;  // py-spy, or what faulthandler wrote
  std::string python_from;    // "py-spy", "faulthandler" or ""
  std::string native_stacks;  // gdb
  std::string place;
  RankCollectives collectives;  // its flight recorder's digest

  RankPlace digest() const;
  // One line for the summary: "rank 2 (node 0): load_batch (train.py:9); S (sleeping) in ...".
  std::string line() const;
  // Everything, for the rank's log.
  std::string full_text() const;
};

struct HangReport {
  double timeout_seconds = 0;
  std::vector<RankLook> ranks;    // this node's
  std::vector<RankPlace> places;  // every node's, the verdict's input
  std::string verdict;            // the stacks' odd one out, then the flight recorder's finding
  CollectiveVerdict collective;
  std::string stacks_at;  // where the full stacks were written, for people

  // The verdict from `places` (every node's): the same on every node.
  void decide();

  std::string text() const;       // for stderr
  std::string json_text() const;  // the --summary-file's "hang" object
};

// The innermost frame of the rank's main thread, from the best source it has: py-spy, then
// faulthandler, then gdb, then the kernel's wait channel.
std::string place_of(const RankLook& look);

// The documented exit status of a hung job.
inline constexpr int kHangExitCode = 124;

// The hang as the other nodes hear of it (the abort record).
JobFailure hang_failure(const HangReport& report);

class RankLog;
// The whole of what was seen of each rank goes at the end of its log file, or, where it has
// none, into DIR/hang_stacks_rank_<rank>.txt; report.stacks_at says where.
void keep_full_stacks(HangReport& report, const std::function<RankLog*(int rank)>& log_of,
                      const std::string& dir);

}  // namespace aml
