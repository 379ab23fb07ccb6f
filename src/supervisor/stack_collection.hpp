// Looking inside the ranks of a hung job (DESIGN §6): Python stacks with py-spy and native
// stacks with gdb, where they are installed, every rank at once and each bounded in time; and
// where each rank's main thread is, from those or from Python's faulthandler output.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace aml {

struct StackTools {
  std::string py_spy;  // its path; "" when it is not installed
  std::string gdb;
  // Looked up in the launcher's PATH.
  static StackTools find();
};

struct RankStacks {
  std::string python;  // py-spy's dump of every thread ("" where it was not run or failed)
  std::string native;  // gdb's backtrace of every thread
};

// The process that is the rank: the worker itself, or, where the worker is a shell waiting
// for its command (sh -c "python train.py"), that command.
pid_t rank_process(pid_t worker);

// py-spy for the ranks that are Python, then gdb for every rank (one tracer at a time), all
// ranks at once, each tool given `limit`.
std::vector<RankStacks> collect_stacks(const std::vector<pid_t>& pids,
                                       const std::vector<bool>& python, const StackTools& tools,
                                       std::chrono::milliseconds limit);

// Where the main thread is, as "function (file:line)" (file without its directory); "" when
// the text says nothing usable.
std::string place_from_py_spy(const std::string& dump);
std::string place_from_faulthandler(const std::string& text);
// "read < main (blocked.c:12)": the innermost function, then the innermost one with a source.
std::string place_from_gdb(const std::string& backtrace);

}  // namespace aml
