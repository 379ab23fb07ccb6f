// Looking inside the ranks of a hung job (DESIGN §6): Python stacks with py-spy and native
// stacks with gdb, where they are installed; and where each rank's main thread is, from those
// or from Python's faulthandler output.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace aml {

struct StackTools {
  std::string py_spy;  // its path; "" when it is not installed
  std::string gdb;
  // Looked up in the launcher's PATH.
  static StackTools find();
};

// The process that is the rank: the worker itself, or, where the worker is a shell waiting
// for its command (sh -c "python train.py"), that command.
pid_t rank_process(pid_t worker);

// The tools' command lines for one process (run with ToolProcess, beside the loop).
std::vector<std::string> py_spy_command(const StackTools& tools, pid_t pid);
std::vector<std::string> gdb_command(const StackTools& tools, pid_t pid);

// The frames of the main thread in a py-spy dump, to tell whether it moved between two looks.
std::string main_thread_frames(const std::string& dump);

// Where the main thread is, as "function (file:line)" (file without its directory); "" when
// the text says nothing usable.
std::string place_from_py_spy(const std::string& dump);
std::string place_from_faulthandler(const std::string& text);
// "read < main (blocked.c:12)": the innermost function, then the innermost one with a source.
std::string place_from_gdb(const std::string& backtrace);

}  // namespace aml
