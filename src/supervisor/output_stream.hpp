// One output stream (stdout or stderr) of one worker, read from its pipe and relayed line by
// line (LineRelay).
#pragma once

#include <string>
#include <vector>

#include "supervisor/line_relay.hpp"
#include "util/unique_fd.hpp"

namespace aml {

class OutputStream {
 public:
  OutputStream(UniqueFd pipe, StreamSinks sinks)
      : pipe_(std::move(pipe)), relay_(std::move(sinks)) {}

  int fd() const { return pipe_.get(); }
  bool is_open() const { return static_cast<bool>(pipe_); }

  // The epoll set that watches the pipe. The pipe leaves it before it is closed: a child that
  // is still between fork and exec holds a copy of the pipe, and epoll would go on reporting
  // the closed end until that copy is gone, as a busy loop.
  void watch_with(int epoll_fd) { epoll_fd_ = epoll_fd; }

  // Reads what the pipe holds without blocking. At end of file a partial last line is written
  // out (with a newline added on the console) and the pipe is closed. Returns the bytes read.
  std::size_t drain();

  // Stops reading: a partial last line is written out as at end of file.
  void close() {
    if (pipe_) finish();
  }

  // The last `count` lines seen (only with keep_tail).
  std::vector<std::string> tail(std::size_t count) const { return relay_.tail(count); }
  void capture(std::size_t max_bytes) { relay_.capture(max_bytes); }
  const std::string& captured() const { return relay_.captured(); }

 private:
  void finish();

  UniqueFd pipe_;
  int epoll_fd_ = -1;
  LineRelay relay_;
};

}  // namespace aml
