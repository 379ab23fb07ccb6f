// Starting one worker: clone + exec (as posix_spawn does), its own process group, the argv
// executed directly, and death with the launcher should the launcher be killed outright.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <aml/error.hpp>
#include <string>
#include <vector>

namespace aml {

// Where a worker runs (--bind, placement/placement.hpp): set in the child before exec.
struct WorkerBinding {
  std::vector<int> cpus;  // its CPU affinity; empty: the launcher's
  // Its memory policy over these nodes: unchanged (the launcher's), preferred (MPOL_PREFERRED,
  // or MPOL_PREFERRED_MANY for several nodes where the kernel has it) or bind (MPOL_BIND).
  enum class Memory { unchanged, preferred, bind };
  Memory memory = Memory::unchanged;
  std::vector<int> memory_nodes;
};

struct SpawnRequest {
  std::vector<std::string> argv;     // argv[0] is looked up in PATH like execvp
  std::vector<std::string> environ;  // "NAME=value" entries, the whole environment
  sigset_t signal_mask;              // the mask the worker starts with (the launcher's original)
  int stdin_fd = -1;                 // -1: inherit the launcher's
  int stdout_fd = -1;
  int stderr_fd = -1;
  int inherited_fd = -1;  // a close-on-exec descriptor the worker keeps (its progress page)
  const WorkerBinding* binding = nullptr;
};

// Where execvp would find the program: PATH of the launcher's own environment, as a shell
// searches it; an error names the command.
Result<std::string> find_program(const std::string& name);

// The pid of the started worker, leader of a new process group; an error names the command.
// A binding the kernel refused (a container's seccomp profile refuses set_mempolicy) does
// not stop the worker: `binding_refused` says what was refused.
Result<pid_t> spawn_worker(const SpawnRequest& request, std::string* binding_refused = nullptr);

}  // namespace aml
