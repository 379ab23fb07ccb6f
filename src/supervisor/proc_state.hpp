// A process as /proc shows it, for a look at a hung rank (DESIGN §6).
#pragma once

#include <sys/types.h>

#include <string>

namespace aml {

struct ProcState {
  bool found = false;
  char state = '?';         // R, S, D, T, Z ...
  std::string wchan;        // the kernel function it waits in ("" when running or unknown)
  long long cpu_ticks = 0;  // user + system, in clock ticks
  long long reaped_children_cpu_ticks = 0;  // its children's that it waited for
  long long resident_pages = 0;
  int threads = 0;
  std::string comm;          // its name
  std::string exe;           // the program's path
  std::string kernel_stack;  // /proc/PID/stack (root only; "" otherwise)

  // "S (sleeping) in hrtimer_nanosleep, 3 threads"
  std::string describe() const;
  bool python() const;  // a Python interpreter (its stacks are Python's)
};

ProcState read_proc_state(pid_t pid);
// /proc/PID/stat alone (state, CPU, memory, threads): what a metrics scrape needs, cheaply.
// `pid` may be "self".
ProcState read_proc_stat(const std::string& pid);
double resident_bytes(const ProcState& p);
// User + system time of its main thread alone, in clock ticks; -1 where it is gone.
long long main_thread_cpu_ticks(pid_t pid);
double ticks_to_seconds(long long ticks);

}  // namespace aml
