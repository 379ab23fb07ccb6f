#include "supervisor/run_workers.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>

#include "supervisor/exit_status.hpp"

namespace aml {
namespace {

using Clock = std::chrono::steady_clock;

struct Running {
  WorkerLaunch launch;
  pid_t pid = 0;
  bool alive = false;
};

class Supervisor {
 public:
  explicit Supervisor(const RunOptions& options) : options_(options) {
    sigemptyset(&handled_);
    for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2})
      sigaddset(&handled_, sig);
    // Blocked here and taken with sigtimedwait: no handler runs in the middle of anything.
    sigprocmask(SIG_BLOCK, &handled_, &original_mask_);
    // Orphaned grandchildren are re-parented to us, so that we reap them (as PID 1 anyway).
    if (getpid() != 1) prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
  ~Supervisor() { sigprocmask(SIG_SETMASK, &original_mask_, nullptr); }

  RunOutcome run(const std::vector<WorkerLaunch>& launches) {
    for (const WorkerLaunch& launch : launches) {
      auto pid = spawn_worker({launch.argv, launch.environ, original_mask_});
      if (!pid) {
        outcome_.spawn_error = pid.error();
        outcome_.exit_code = 127;  // as a shell reports a command it cannot run
        begin_teardown();
        break;
      }
      workers_.push_back({launch, *pid, true});
      ++alive_;
    }
    while (alive_ > 0) wait_for_event();
    kill_leftovers();
    return outcome_;
  }

 private:
  void wait_for_event() {
    timespec timeout{3600, 0};
    if (tearing_down_) {
      auto left = std::chrono::duration<double>(deadline_ - Clock::now()).count();
      left = std::max(0.0, left);
      timeout.tv_sec = static_cast<time_t>(left);
      timeout.tv_nsec = static_cast<long>((left - std::floor(left)) * 1e9);
    }
    siginfo_t info;
    int sig = sigtimedwait(&handled_, &info, &timeout);
    if (sig < 0) {
      if (errno == EAGAIN && tearing_down_) signal_workers(SIGKILL);
      return;
    }
    if (sig == SIGCHLD) return reap();
    signal_workers(sig);
    if (sig == SIGINT && interrupted_) signal_workers(SIGKILL);  // a second Ctrl-C: now
    if (sig == SIGINT || sig == SIGTERM) {
      interrupted_ = interrupted_ || sig == SIGINT;
      begin_teardown();
    }
  }

  void reap() {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      for (Running& worker : workers_) {
        if (worker.pid != pid || !worker.alive) continue;
        worker.alive = false;
        --alive_;
        bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (failed && !outcome_.first_failure) {
          outcome_.first_failure =
              WorkerExit{worker.launch.rank, worker.launch.local_rank, pid, status};
          outcome_.exit_code = exit_code_of(status);
          begin_teardown();
        }
      }
    }
  }

  void begin_teardown() {
    if (tearing_down_) return;
    tearing_down_ = true;
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(options_.term_timeout_seconds));
    signal_workers(SIGCONT);  // a stopped worker could not act on SIGTERM
    signal_workers(SIGTERM);
  }

  void signal_workers(int sig) {
    for (const Running& worker : workers_) {
      if (worker.alive) killpg(worker.pid, sig);
    }
  }

  // Whatever is left in the workers' process groups (background children) goes with them.
  void kill_leftovers() {
    for (const Running& worker : workers_) {
      killpg(worker.pid, SIGKILL);
      int status;
      while (waitpid(-worker.pid, &status, 0) > 0 || errno == EINTR) {
      }
    }
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }

  RunOptions options_;
  sigset_t handled_;
  sigset_t original_mask_;
  std::vector<Running> workers_;
  int alive_ = 0;
  bool tearing_down_ = false;
  bool interrupted_ = false;
  Clock::time_point deadline_;
  RunOutcome outcome_;
};

}  // namespace

RunOutcome run_workers(const std::vector<WorkerLaunch>& workers, const RunOptions& options) {
  Supervisor supervisor(options);
  return supervisor.run(workers);
}

}  // namespace aml
