// The launcher's stdout or stderr as the workers' lines reach it.
//
// A console that nobody reads (a stalled log shipper, a paused pager) must not stop the
// launcher: signals, fail-fast and heartbeats wait on nothing. A pipe or terminal is written
// through a description of the launcher's own, non-blocking (the shared one is left as it
// is), a socket with MSG_DONTWAIT; what it cannot take yet waits here, and the relays stop
// reading until it has drained. Files and /dev/null never block and are written directly.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/unique_fd.hpp"

namespace aml {

class Console {
 public:
  explicit Console(int fd);

  // The descriptor to watch for room while blocked.
  int fd() const { return own_ ? own_.get() : fd_; }
  bool blocked() const { return !pending_.empty(); }
  // When it last took anything (or was last found empty).
  std::chrono::steady_clock::time_point last_progress() const { return last_progress_; }

  // All of `first` then `rest`, or as much as the console takes now and the rest kept.
  void write(std::string_view first, std::string_view rest = {});
  // Writes what is kept, as far as the console takes it; true when nothing is left.
  bool flush();
  // Drops what is kept and whatever comes later (the job is being stopped, or the console
  // took nothing for too long: the log files have all of it).
  void give_up();

 private:
  // Bytes written, 0 when the console has no room now; -1 when it refuses for good.
  ssize_t try_write(std::string_view data);

  int fd_;
  UniqueFd own_;  // a non-blocking description of a pipe or terminal
  bool socket_ = false;
  bool given_up_ = false;
  std::string pending_;
  std::chrono::steady_clock::time_point last_progress_ = std::chrono::steady_clock::now();
};

// Writes `text` to a console that may be stalled, waiting at most `patience` for it to take
// it all (what it has not taken then is dropped): for what the launcher says after its
// workers are gone (the failure summary), when nothing else can wait on the console. True when
// all of it was written.
bool write_within(int fd, std::string_view text, std::chrono::milliseconds patience);

}  // namespace aml
