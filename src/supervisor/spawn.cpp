#include "supervisor/spawn.hpp"

#include <spawn.h>
#include <string.h>

namespace aml {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

Result<pid_t> spawn_worker(const SpawnRequest& request) {
  if (request.argv.empty()) return missing("command", "a command to run after --");
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group (so that signals reach the worker's whole tree), the launcher's original
  // mask, and default dispositions for everything the launcher handles itself.
  // Only the signals whose disposition the launcher changes need resetting (each costs the
  // child a system call before exec): SIGPIPE, which it ignores, and those it takes itself.
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2})
    sigaddset(&defaults, sig);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &request.signal_mask);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  std::vector<char*> argv = c_strings(request.argv);
  std::vector<char*> envp = c_strings(request.environ);
  // posix_spawnp searches PATH in the launcher's environment, as a shell would.
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  // The launcher's descriptors are all close-on-exec; dup2 gives the worker its own 0, 1, 2.
  const int targets[] = {request.stdin_fd, request.stdout_fd, request.stderr_fd};
  for (int target = 0; target < 3; ++target) {
    if (targets[target] >= 0) posix_spawn_file_actions_adddup2(&files, targets[target], target);
  }
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &files, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return invalid("command", request.argv[0],
                   std::string("a program that can run (") + strerrordesc_np(rc) + ")");
  return pid;
}

}  // namespace aml
