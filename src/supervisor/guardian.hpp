// Containment that outlives the supervisor (DESIGN §4). The process the scheduler started
// stays as a small guardian, a child subreaper, and a child of it goes on as the supervisor,
// in a process group of its own. Whichever of the two is SIGKILLed, the other one is left to
// kill everything that was started:
// - the guardian killed (alone, or with its process group, as Open MPI and Slurm's pgid
//   tracking send): the supervisor hears it (PR_SET_PDEATHSIG) and kills every worker and
//   every descendant at once; it is still their subreaper.
// - the supervisor killed: its children, and every orphan it had adopted, are re-parented to
//   the guardian, which kills them all.
// Signals from outside reach the guardian and are passed on with their sender; the guardian
// exits with the supervisor's status (128+N for a signal).
#pragma once

#include <chrono>
#include <optional>

namespace aml {

// Returns in the supervisor (nullopt); in the guardian once the supervisor and everything it
// left are gone, with the exit status for the launcher. Not as PID 1: there the kernel kills
// the whole PID namespace with it. nullopt also when no child can be made (then the launcher
// goes on unguarded, as it did before). Best called early: the less memory the launcher has
// touched, the cheaper the fork, and the fewer pages either side copies on writing.
std::optional<int> split_off_supervisor();

// The signal the supervisor gets when its guardian dies: stop everything now.
int guardian_lost_signal();

// A SIGHUP from the kernel once the guardian is gone: it died while this process was stopped
// (a paused VM, SIGSTOP to the host's processes), and its process group, orphaned with a
// stopped member, got SIGHUP and SIGCONT. That is the guardian's loss, which its own signal
// tells, not a stop from outside.
bool hangup_of_orphaned_group(int sig, int code);

// Who sent a signal the supervisor read from its signalfd.
struct SignalOrigin {
  long sender = 0;         // the original sender's pid; 0 where unknown (the kernel's)
  bool passed_on = false;  // it came through the guardian
};
SignalOrigin signal_origin(long sender, int code, int value);

// One signal sent to both of the launcher's processes at once (pkill, killall, a scheduler
// that signals every process of a job) reaches the supervisor twice: directly and passed on.
// Told apart from a signal sent twice (Ctrl-C twice), which comes the same way both times.
class DuplicateSignals {
 public:
  // True when this is the other copy of the last one.
  bool is_copy(int sig, const SignalOrigin& origin);

 private:
  int last_signal_ = 0;
  SignalOrigin last_origin_;
  std::chrono::steady_clock::time_point last_time_;
};

}  // namespace aml
