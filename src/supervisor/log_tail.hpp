// A worker's stdout that goes straight into its log file, read back from there for the
// console. The worker's own write is the only copy into the file (through a pipe the bytes
// were copied three times: into the pipe, out of it, into the file), and a slow console never
// holds a worker up: the file keeps what the console has not shown yet.
#pragma once

#include <sys/types.h>

#include <cstddef>

#include "supervisor/line_relay.hpp"

namespace aml {

class RankLog;

class LogTail {
 public:
  // Reads what the file gets from its current end on.
  LogTail(RankLog& log, StreamSinks console);
  ~LogTail();
  LogTail(const LogTail&) = delete;
  LogTail& operator=(const LogTail&) = delete;

  // Has `inotify_fd` report every write to the file; false (errno set) if it cannot.
  bool watch_with(int inotify_fd);
  int watch_descriptor() const { return watch_; }

  bool is_open() const { return open_; }
  // The file changed (or may have): there is something to read.
  void changed() { pending_ = true; }
  bool pending() const { return open_ && pending_; }

  // Reads a bounded amount, so that other streams and signals get their turn; stays pending
  // while more may be left. Returns how many of the bytes read the worker wrote (the
  // launcher's own lines in the file are not the worker's output, nor is a look that found
  // nothing new).
  std::size_t drain();
  // Nothing of the worker's writes any more: what the file holds now is read, then the tail
  // closes (a writer beyond the launcher's reach cannot keep it open).
  void read_to_end_and_close();
  // Stops where it is (a partial line goes out as it is).
  void close_now() {
    if (open_) close();
  }

 private:
  std::size_t relay(const char* data, off_t from, off_t to);  // the worker's bytes among them
  void close();

  RankLog& log_;
  LineRelay relay_;
  off_t offset_;
  int inotify_fd_ = -1;
  int watch_ = -1;
  bool open_ = true;
  bool pending_ = true;
  bool closing_ = false;
  off_t close_at_ = 0;
};

}  // namespace aml
