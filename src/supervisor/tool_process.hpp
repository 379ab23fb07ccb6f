// A diagnostic tool (py-spy, gdb) run beside the supervisor's loop: a child process whose
// output comes back as events, bounded in time, never waited for.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "supervisor/reactor.hpp"
#include "util/unique_fd.hpp"

namespace aml {

class ToolProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts argv with stdout and stderr into one pipe that `reactor` watches, default signals
  // and an empty mask. done() at once where it cannot start.
  ToolProcess(Reactor& reactor, const std::vector<std::string>& argv, Clock::time_point deadline);
  ~ToolProcess();
  ToolProcess(const ToolProcess&) = delete;
  ToolProcess& operator=(const ToolProcess&) = delete;

  // Its output closed (it ended), or its time ran out (then it is killed).
  bool done() const { return !out_; }
  const std::string& text() const { return text_; }
  pid_t pid() const { return pid_; }
  // The supervisor's reaper took this pid: never signal it again.
  void reaped() { pid_ = -1; }
  // Past the deadline: killed, and what it wrote so far is its text.
  void tick(Clock::time_point now);
  Clock::time_point deadline() const { return deadline_; }

 private:
  void read_some();
  void finish(bool timed_out);

  Reactor& reactor_;
  pid_t pid_ = -1;
  UniqueFd out_;
  std::string text_;
  Clock::time_point deadline_;
};

}  // namespace aml
