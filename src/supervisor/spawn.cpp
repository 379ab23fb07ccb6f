#include "supervisor/spawn.hpp"

#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "util/errno_text.hpp"

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

// Called before the child exists, so that the child only calls execve.
Result<std::string> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  int reason = ENOENT;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
      reason = EACCES;
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return invalid("command", name,
                 std::string("a program that can run (") + errno_text(reason) + ")");
}

namespace {

// Everything the child needs, prepared by the parent: between clone and exec the child shares
// the parent's memory and may only make system calls.
struct ChildPlan {
  const char* path;
  char* const* argv;
  char* const* envp;
  const sigset_t* mask;
  int fds[3];
  int inherited_fd;
  pid_t parent;
  int error;  // set by the child when it cannot exec
};

// The signals whose disposition the launcher changes (SIGPIPE ignored, the rest taken through
// its signalfd): the worker gets the defaults back.
constexpr int kResetSignals[] = {SIGPIPE, SIGCHLD, SIGTERM, SIGINT,
                                 SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2};

int child_main(void* arg) {
  auto* plan = static_cast<ChildPlan*>(arg);
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int sig : kResetSignals) sigaction(sig, &defaults, nullptr);
  // If the launcher dies without a teardown (SIGKILL, OOM killer), its workers die with it
  // instead of running on as orphans; the check closes the race with a launcher that died
  // before the prctl.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != plan->parent) {
    plan->error = ESRCH;
    _exit(127);
  }
  if (setpgid(0, 0) != 0) {  // own process group: signals reach the worker's whole tree
    plan->error = errno;
    _exit(127);
  }
  for (int target = 0; target < 3; ++target) {
    if (plan->fds[target] >= 0 && dup2(plan->fds[target], target) < 0) {
      plan->error = errno;
      _exit(127);
    }
  }
  if (plan->inherited_fd >= 0 && fcntl(plan->inherited_fd, F_SETFD, 0) != 0) {
    plan->error = errno;
    _exit(127);
  }
  sigprocmask(SIG_SETMASK, plan->mask, nullptr);
  execve(plan->path, plan->argv, plan->envp);
  plan->error = errno;
  _exit(127);
}

constexpr std::size_t kChildStack = 64 * 1024;

}  // namespace

Result<pid_t> spawn_worker(const SpawnRequest& request) {
  if (request.argv.empty()) return missing("command", "a command to run after --");
  auto program = find_program(request.argv[0]);
  if (!program) return program.error();
  std::vector<char*> argv = c_strings(request.argv);
  std::vector<char*> envp = c_strings(request.environ);
  ChildPlan plan{program->c_str(),
                 argv.data(),
                 envp.data(),
                 &request.signal_mask,
                 {request.stdin_fd, request.stdout_fd, request.stderr_fd},
                 request.inherited_fd,
                 getpid(),
                 0};
  // The launcher's descriptors are all close-on-exec; the dup2s give the worker its 0, 1, 2.
  // CLONE_VM | CLONE_VFORK, as posix_spawn does: no copy of the launcher's memory, and the
  // launcher goes on only once the child has exec'd or failed.
  auto stack = std::make_unique_for_overwrite<char[]>(kChildStack);
  sigset_t all, previous;
  sigfillset(&all);
  // No signal may interrupt the child while it shares our memory.
  sigprocmask(SIG_SETMASK, &all, &previous);
  pid_t pid = clone(child_main, stack.get() + kChildStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  int clone_error = errno;
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) {
    return invalid("command", request.argv[0],
                   std::string("a process to start (clone: ") + errno_text(clone_error) + ")");
  }
  if (plan.error != 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return invalid("command", request.argv[0],
                   std::string("a program that can run (") + errno_text(plan.error) + ")");
  }
  return pid;
}

}  // namespace aml
