// One output stream (stdout or stderr) of one worker: read from its pipe and relayed line by
// line, so that lines of different workers never mix on the console or in the log file.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/unique_fd.hpp"

namespace aml {

struct StreamSinks {
  int console_fd = -1;     // where lines are shown; -1 when this rank is filtered out
  std::string tag;         // put before every console line ("" for none)
  int log_fd = -1;         // the rank's log file, written untagged; -1 for none
  bool keep_tail = false;  // remember the last lines (stderr, for the failure summary)
};

class OutputStream {
 public:
  OutputStream(UniqueFd pipe, StreamSinks sinks);

  int fd() const { return pipe_.get(); }
  bool is_open() const { return static_cast<bool>(pipe_); }

  // The epoll set that watches the pipe. The pipe leaves it before it is closed: a child that
  // is still between fork and exec holds a copy of the pipe, and epoll would go on reporting
  // the closed end until that copy is gone, as a busy loop.
  void watch_with(int epoll_fd) { epoll_fd_ = epoll_fd; }

  // Reads what the pipe holds without blocking. At end of file a partial last line is written
  // out (with a newline added on the console) and the pipe is closed.
  void drain();

  // Stops reading: a partial last line is written out as at end of file.
  void close() {
    if (pipe_) finish();
  }

  // The last `count` lines seen (only with keep_tail).
  std::vector<std::string> tail(std::size_t count) const;

 private:
  void consume(std::string_view data);
  // Whole lines, in two pieces so that a line completed across reads need not be joined
  // with the rest of the buffer.
  void emit(std::string_view first, std::string_view rest = {});
  void append_tagged(std::string_view whole_lines);
  void grow_tagged(std::size_t at_least);
  static void write_pieces(int fd, std::string_view first, std::string_view rest);
  void finish();

  UniqueFd pipe_;
  int epoll_fd_ = -1;
  StreamSinks sinks_;
  std::string partial_;  // bytes after the last newline, waiting for the rest of their line
  std::string tail_;
  // Reused buffer for tagged console output; lines always end in a newline here.
  std::unique_ptr<char[]> tagged_;
  std::size_t tagged_size_ = 0;
  std::size_t tagged_capacity_ = 0;
};

}  // namespace aml
