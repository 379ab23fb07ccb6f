// --hang-timeout (DESIGN §6): is the job hung? Each worker shares a progress page with the
// launcher (progress/progress_page.hpp); a worker shows progress by writing output or by
// calling the progress API. The job is hung when no worker showed any for the timeout: ranks
// that never print do not make it look hung while another goes on.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "progress/progress_page.hpp"
#include "util/unique_fd.hpp"

namespace aml {

class HangWatch {
 public:
  using Clock = std::chrono::steady_clock;

  explicit HangWatch(std::chrono::milliseconds timeout);  // 0: off
  ~HangWatch();
  HangWatch(const HangWatch&) = delete;
  HangWatch& operator=(const HangWatch&) = delete;

  bool on() const { return timeout_.count() > 0; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // A page for the next worker (in start order): the descriptor it inherits, -1 where none
  // could be made (then only its output counts).
  int add_worker();
  // Worker `index` wrote something (its pipe, or its log file grew).
  void output_from(std::size_t index);
  // At a check time (else nullopt): looks at every page and every worker's CPU time (pids in
  // start order, 0 for an ended one); true when none of them progressed for the timeout.
  std::optional<bool> quiet(Clock::time_point now, const std::vector<pid_t>& pids);
  int next_check_ms(Clock::time_point now) const;
  bool due(Clock::time_point now) const { return on() && now >= next_check_; }

  std::int64_t step(std::size_t index) const;  // the last step given; -1 for none
  double cpu_seconds_last_interval(std::size_t index) const;
  std::chrono::milliseconds interval() const;  // between checks

 private:
  struct Page {
    UniqueFd fd;
    ProgressPage* page = nullptr;
    std::uint64_t calls_seen = 0;
    long long cpu_ticks = -1;
    long long cpu_ticks_before = -1;
  };
  std::chrono::milliseconds timeout_;
  std::vector<Page> pages_;
  Clock::time_point last_progress_;
  Clock::time_point next_check_;
};

}  // namespace aml
