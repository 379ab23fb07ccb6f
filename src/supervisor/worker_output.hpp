// The workers' output on its way to the consoles and the log files (DESIGN §4): a pipe per
// stream, or stdout straight into the rank's log file and read back from there; every line
// relayed whole and tagged. While a console takes nothing, no relay reads: the workers' pipes
// fill and hold them, their log files keep what they write, and nothing piles up in the
// launcher; signals, failures and peers go on.
#pragma once

#include <sys/types.h>

#include <aml/error.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/console.hpp"
#include "supervisor/log_tail.hpp"
#include "supervisor/output_stream.hpp"
#include "supervisor/rank_log.hpp"
#include "supervisor/reactor.hpp"
#include "supervisor/run_workers.hpp"
#include "util/unique_fd.hpp"

namespace aml {

// The launcher's stdout and stderr, for the whole run.
struct Consoles {
  Console out{STDOUT_FILENO};
  Console err{STDERR_FILENO};
};

// The descriptors one worker's spawn gets for its output (the launcher keeps the read ends).
struct OutputEnds {
  UniqueFd null_input;   // only local rank 0 reads the launcher's stdin
  UniqueFd stdout_file;  // its log file, appending
  UniqueFd stdout_pipe;
  UniqueFd stderr_pipe;
  int stdin_fd() const { return null_input ? null_input.get() : -1; }
  int stdout_fd() const {
    return stdout_file ? stdout_file.get() : stdout_pipe ? stdout_pipe.get() : -1;
  }
};

class OutputRelay {
 public:
  using Clock = std::chrono::steady_clock;

  // `on_output(index)`: worker `index` wrote something (progress, for the hang watch).
  // `grace`: how long a console that takes nothing is waited for once the workers are gone.
  OutputRelay(Reactor& reactor, const OutputOptions& options, Clock::duration grace,
              const std::vector<std::unique_ptr<RankLog>>& log_files, Consoles& consoles,
              std::function<void(std::size_t)> on_output);

  // How many of the round's workers the console shows (before the first prepare()).
  void count_shown(const std::vector<WorkerLaunch>& launches);
  // Worker `index`'s streams; its launch may lose PYTHONUNBUFFERED (a worker on the terminal).
  Result<OutputEnds> prepare(WorkerLaunch& launch, std::size_t index);
  // The worker runs: its streams are read from now on.
  void attach(std::size_t index);

  // After each pass of the loop: log tails read, relays paused or resumed for the consoles.
  void after_events();
  // Every worker and leftover is gone: the tails read to the end; pipes something outside the
  // launcher's reach still holds are closed after a grace.
  void swept();
  void tick(Clock::time_point now);
  std::optional<Clock::time_point> deadline(Clock::time_point now) const;

  int open_streams() const;
  bool consoles_blocked() const { return consoles_.out.blocked() || consoles_.err.blocked(); }
  // The job is stopping: the console stops catching up (the log files hold all of it), and a
  // blocked console is given up.
  void stop_requested();
  // A worker's pipes, read to what they hold now.
  void drain(std::size_t index);
  std::vector<std::string> stderr_tail(std::size_t index, std::size_t lines) const;
  OutputStream& stderr_of(std::size_t index) { return *outputs_[index].err; }
  // Its stdout goes straight into its log file, read by nobody: the hang watch looks at its
  // size instead.
  bool stdout_unread(std::size_t index) const;

 private:
  struct Output {
    // stdout: a pipe, or its log file (followed for the console by out_tail, or not at all
    // for a rank the console does not show); nothing where the worker has the terminal
    std::unique_ptr<OutputStream> out;
    std::unique_ptr<LogTail> out_tail;
    std::unique_ptr<OutputStream> err;
    // Between prepare() and attach().
    UniqueFd out_read, err_read;
    std::unique_ptr<LogTail> pending_tail;
    StreamSinks out_sinks, err_sinks;
    int open_streams() const;
  };
  bool shown(int local_rank) const;
  int log_writes();
  void take_log_writes();
  void pause_while_blocked();
  bool console_stuck_at_the_end(Clock::time_point now) const;
  void read_stream(std::size_t index, bool stdout_stream);

  Reactor& reactor_;
  const OutputOptions& options_;
  Clock::duration grace_;
  const std::vector<std::unique_ptr<RankLog>>& log_files_;
  Consoles& consoles_;
  std::function<void(std::size_t)> on_output_;
  std::vector<Output> outputs_;
  int shown_workers_ = 0;
  bool paused_ = false;
  bool console_watched_[2] = {false, false};  // stdout, stderr: watched for room
  UniqueFd log_writes_;                       // inotify
  bool log_writes_tried_ = false;
  bool swept_ = false;
  bool stopping_ = false;
  Clock::time_point drain_deadline_;
};

}  // namespace aml
