#include "supervisor/spawn.hpp"

#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
  // --bind, prepared by the parent (sizes in bytes / bits); the child only makes the calls.
  cpu_set_t* cpus;
  std::size_t cpus_size;
  int memory_mode;
  const unsigned long* memory_mask;
  unsigned long memory_max_node;
  int memory_first_node;
  int affinity_error;  // set by the child when the kernel refused one
  int memory_error;
  const rlimit* descriptors;  // the limit the worker gets (nullptr: the launcher's)
};

// The descriptor limit this process started with, taken before anything ran: node 0's
// launcher raises its own to serve every rank (store/core/store_host.cpp), and its workers get the
// limit they would have had without it, as under any other launcher.
const rlimit kStartedDescriptors = [] {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = limit.rlim_max = RLIM_INFINITY;
  return limit;
}();

constexpr int kPreferredMany = 5;  // MPOL_PREFERRED_MANY (Linux 5.15)
constexpr int kPreferred = 1;      // MPOL_PREFERRED
constexpr int kBind = 2;           // MPOL_BIND

// In the child, between clone and exec: system calls only.
void apply_binding(ChildPlan* plan) {
  if (plan->cpus != nullptr && sched_setaffinity(0, plan->cpus_size, plan->cpus) != 0) {
    plan->affinity_error = errno;
  }
  if (plan->memory_mode == 0) return;
  if (syscall(SYS_set_mempolicy, plan->memory_mode, plan->memory_mask, plan->memory_max_node) == 0)
    return;
  if (plan->memory_mode == kPreferredMany && errno == EINVAL) {
    // An older kernel: the first of the nodes.
    unsigned long first[64] = {};
    const int node = plan->memory_first_node;
    first[node / 64] = 1UL << (node % 64);
    if (syscall(SYS_set_mempolicy, kPreferred, first, 64UL * 64) == 0) return;
  }
  plan->memory_error = errno;
}

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
  apply_binding(plan);
  if (plan->descriptors != nullptr) setrlimit(RLIMIT_NOFILE, plan->descriptors);
  sigprocmask(SIG_SETMASK, plan->mask, nullptr);
  execve(plan->path, plan->argv, plan->envp);
  plan->error = errno;
  _exit(127);
}

constexpr std::size_t kChildStack = 64 * 1024;

}  // namespace

Result<pid_t> spawn_worker(const SpawnRequest& request, std::string* binding_refused) {
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
                 0,
                 nullptr,
                 0,
                 0,
                 nullptr,
                 0,
                 0,
                 0,
                 0,
                 nullptr};
  rlimit descriptors{};
  if (kStartedDescriptors.rlim_cur != RLIM_INFINITY &&
      getrlimit(RLIMIT_NOFILE, &descriptors) == 0 &&
      descriptors.rlim_cur != kStartedDescriptors.rlim_cur) {
    descriptors.rlim_cur = std::min(kStartedDescriptors.rlim_cur, descriptors.rlim_max);
    plan.descriptors = &descriptors;
  }
  // --bind: the affinity mask and the memory policy's node mask, made here.
  cpu_set_t* cpus = nullptr;
  std::vector<unsigned long> memory_mask;
  if (const WorkerBinding* binding = request.binding) {
    if (!binding->cpus.empty()) {
      const int count = binding->cpus.back() + 1;
      cpus = CPU_ALLOC(count);
      plan.cpus_size = CPU_ALLOC_SIZE(count);
      CPU_ZERO_S(plan.cpus_size, cpus);
      for (int cpu : binding->cpus) CPU_SET_S(cpu, plan.cpus_size, cpus);
      plan.cpus = cpus;
    }
    if (binding->memory != WorkerBinding::Memory::unchanged && !binding->memory_nodes.empty()) {
      const int nodes = binding->memory_nodes.back() + 1;
      memory_mask.assign(static_cast<std::size_t>((nodes + 63) / 64), 0);
      for (int node : binding->memory_nodes) {
        memory_mask[static_cast<std::size_t>(node / 64)] |= 1UL << (node % 64);
      }
      const bool several = binding->memory_nodes.size() > 1;
      plan.memory_mode = binding->memory == WorkerBinding::Memory::bind ? kBind
                         : several                                      ? kPreferredMany
                                                                        : kPreferred;
      plan.memory_mask = memory_mask.data();
      plan.memory_max_node = memory_mask.size() * 64 + 1;
      plan.memory_first_node =
          binding->memory_nodes.front() < 64 * 64 ? binding->memory_nodes.front() : 0;
    }
  }
  struct CpuSetFree {
    void operator()(cpu_set_t* set) const { CPU_FREE(set); }
  };
  std::unique_ptr<cpu_set_t, CpuSetFree> cpus_owner(cpus);
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
  if (binding_refused != nullptr && (plan.affinity_error != 0 || plan.memory_error != 0)) {
    *binding_refused =
        plan.affinity_error != 0
            ? std::string("its CPU affinity (sched_setaffinity: ") +
                  errno_text(plan.affinity_error) + ")"
            : std::string("its memory policy (set_mempolicy: ") + errno_text(plan.memory_error) +
                  (plan.memory_error == EPERM ? "; a container's seccomp profile refuses it" : "") +
                  ")";
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
