// --hang-timeout (DESIGN §6): is the job hung? Each worker shares a progress page with the
// launcher (progress/progress_page.hpp); a worker shows progress by writing output or by
// calling the progress API. The job is quiet when no worker showed any for the timeout: ranks
// that never print do not make it look hung while another goes on. Start-up is not a hang: a
// worker that has not shown its first progress is starting (imports, a checkpoint's load, the
// first meeting of the ranks) until --hang-startup-timeout after its start, or until the job
// has been showing progress for the timeout (then it is a rank that never prints, as in jobs
// where only rank 0 does).
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

  // timeout 0: off.
  HangWatch(std::chrono::milliseconds timeout, std::chrono::milliseconds startup_timeout);
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
  // Reads the progress pages now (between check times, while an inquiry runs).
  void read_pages(Clock::time_point now);
  // A worker that showed progress after `since` (output or the progress API), if any.
  std::optional<std::size_t> moved_since(Clock::time_point since) const;
  // The job was seen moving otherwise (a look at its ranks): its clock starts again.
  void moved(Clock::time_point now) { last_progress_ = now; }
  // At a check time (else nullopt): looks at every page and every worker's CPU time (pids in
  // start order, 0 for an ended one); true when none of them progressed for the timeout.
  std::optional<bool> quiet(Clock::time_point now, const std::vector<pid_t>& pids);
  int next_check_ms(Clock::time_point now) const;
  bool due(Clock::time_point now) const { return on() && now >= next_check_; }

  // Some worker showed progress in this round (else the job never got going).
  bool ever_progressed() const { return first_progress_.has_value(); }
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
    Clock::time_point started;
    Clock::time_point last_progress;
    bool progressed = false;  // its first progress came: it is no longer starting
  };
  void progress_of(std::size_t index, Clock::time_point now);

  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds startup_timeout_;
  std::vector<Page> pages_;
  Clock::time_point last_progress_;
  std::optional<Clock::time_point> first_progress_;  // the job's, any worker's
  Clock::time_point next_check_;
};

}  // namespace aml
