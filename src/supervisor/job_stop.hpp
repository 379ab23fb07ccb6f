// A stop is not a failure (DESIGN §4): INT, TERM or HUP from outside ended the run. What the
// launcher says of it: which signal, who sent it, on which node, and how the workers ended.
#pragma once

#include <string>

namespace aml {

struct JobStop {
  int signal = 0;
  // The node whose launcher got the signal; -1: this launcher itself.
  int node_rank = -1;
  std::string host;
  int rank = -1;        // a per-process launch: the rank whose launcher got it
  long sender_pid = 0;  // as the kernel told it; 0 where unknown (another node's, the kernel)
  std::string sender;   // its name, where it could be read
  std::string time;     // UTC, when it came
  int workers = 0;      // this node's workers running when it came
  int ended_on_their_own = 0;    // of those: ended before the grace ran out
  int killed_after_grace = 0;    // of those: SIGKILLed after --term-timeout
  bool also_here = false;        // another node's came first, and this launcher got one too
  bool guardian_killed = false;  // the launcher's first process was killed (SIGKILL)
  // The signal the workers got for it; 0 where they had it already (the teardown's TERM).
  int passed_on = 0;
  // A second stop signal (Ctrl-C again) sent the workers SIGTERM, a further one SIGKILL: the
  // last the workers got for it; 0 where none came.
  int escalated_to = 0;
  // It came while the launcher was already stopping its workers for a failure or a hang (as
  // mpirun's TERM does after a rank failed): the verdict stays that one.
  bool during_teardown = false;
  std::string launcher_killed_at;  // UTC: its launcher was then killed (SIGKILL) too

  bool from_here() const { return node_rank < 0; }
};

// "/proc/PID/comm" of the sender, or "" where it is gone or not ours to read.
std::string process_name(long pid);

}  // namespace aml
