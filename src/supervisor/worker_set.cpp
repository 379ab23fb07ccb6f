#include "supervisor/worker_set.hpp"

#include <sys/wait.h>

#include "supervisor/descendants.hpp"
#include "supervisor/spawn.hpp"

namespace aml {

Result<pid_t> WorkerSet::spawn(WorkerLaunch launch, const OutputEnds& ends, int progress_fd,
                               std::string& binding_refused) {
  SpawnRequest request{launch.argv,      launch.environ,         original_mask_, ends.stdin_fd(),
                       ends.stdout_fd(), ends.stderr_pipe.get(), progress_fd,    &launch.binding};
  auto pid = spawn_worker(request, &binding_refused);
  if (!pid) return pid.error();
  workers_.push_back({std::move(launch), *pid, true, 0, {}});
  ++alive_;
  return *pid;
}

void WorkerSet::signal_all(int sig) const {
  for (const WorkerProcess& worker : workers_) {
    if (worker.alive) killpg(worker.pid, sig);
  }
}

void WorkerSet::note(pid_t pid, int status, const OnReaped& on_reaped) {
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    WorkerProcess& worker = workers_[i];
    if (worker.pid != pid || !worker.alive) continue;
    worker.alive = false;
    worker.wait_status = status;
    worker.ended = std::chrono::system_clock::now();
    --alive_;
    on_reaped(pid, status, static_cast<int>(i));
    return;
  }
  on_reaped(pid, status, -1);
}

void WorkerSet::reap(const OnReaped& on_reaped) {
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) note(pid, status, on_reaped);
}

// Every worker has exited: whatever they left (background children, daemons, even those
// that left the workers' process groups) is killed and reaped, so that nothing outlives the
// round and their pipes reach end of file.
void WorkerSet::sweep(const OnReaped& on_reaped) {
  kill_all_descendants([&](pid_t pid, int status) { note(pid, status, on_reaped); });
}

}  // namespace aml
