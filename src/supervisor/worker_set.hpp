// The round's worker processes (DESIGN §4): each started in its own process group with the
// launcher's original signal mask, signalled as a group, reaped, and, once they are all gone,
// everything they left behind killed and reaped too.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <aml/error.hpp>
#include <chrono>
#include <functional>
#include <vector>

#include "supervisor/run_workers.hpp"
#include "supervisor/worker_output.hpp"

namespace aml {

struct WorkerProcess {
  WorkerLaunch launch;
  pid_t pid = 0;
  bool alive = false;
  int wait_status = 0;
  std::chrono::system_clock::time_point ended;
};

class WorkerSet {
 public:
  // A reaped child: a worker (`index` its place), or something else (index -1: an orphan the
  // launcher adopted, or a tool of its own).
  using OnReaped = std::function<void(pid_t pid, int wait_status, int index)>;

  explicit WorkerSet(const sigset_t& original_mask) : original_mask_(original_mask) {}

  // Starts the next worker; `progress_fd` (-1: none) is a descriptor it keeps. What the
  // kernel refused of its binding goes to `binding_refused`.
  Result<pid_t> spawn(WorkerLaunch launch, const OutputEnds& ends, int progress_fd,
                      std::string& binding_refused);

  void signal_all(int sig) const;
  // Every child that has ended, without waiting.
  void reap(const OnReaped& on_reaped);
  // Kills and reaps every descendant (workers' leftovers, adopted orphans, tools).
  void sweep(const OnReaped& on_reaped);

  const std::vector<WorkerProcess>& all() const { return workers_; }
  const WorkerProcess& operator[](std::size_t index) const { return workers_[index]; }
  std::size_t size() const { return workers_.size(); }
  int alive() const { return alive_; }

 private:
  void note(pid_t pid, int status, const OnReaped& on_reaped);

  const sigset_t& original_mask_;
  std::vector<WorkerProcess> workers_;
  int alive_ = 0;
};

}  // namespace aml
