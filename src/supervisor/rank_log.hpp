// One rank's log file (std_log_process_<rank>.txt), written by the launcher and, for stdout,
// by the worker itself.
//
// A worker whose stdout goes straight into the file (a description of its own, appending)
// costs one copy per byte instead of three through a pipe; the launcher reads the file back
// for the console. The launcher's own appends (stderr lines, relayed from a pipe) land in the
// same file, so it remembers where each landed: reading back skips them.
#pragma once

#include <sys/types.h>

#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "util/unique_fd.hpp"

namespace aml {

class RankLog {
 public:
  struct Range {
    off_t begin;
    off_t end;
  };

  // Creates (or empties) the file; null with errno set when it cannot be opened.
  static std::unique_ptr<RankLog> create(const std::string& path);

  const std::string& path() const { return path_; }
  // The launcher's description: appends, and preads when the file can be read back.
  int fd() const { return fd_.get(); }
  bool readable() const { return readable_; }
  off_t size() const;

  // A new description for a worker's stdout, appending; invalid (errno set) on failure.
  UniqueFd open_for_worker() const;

  // Appends whole pieces. While own writes are tracked, records where each write landed.
  void append(std::string_view first, std::string_view rest = {});

  // From now on (for a reader at `from`), remember the launcher's own writes.
  void track_own_writes(off_t from);
  void stop_tracking();
  // The launcher's writes since tracking began, in file order, for the reader to skip and
  // drop as it passes them.
  std::deque<Range>& own_writes() { return own_writes_; }

 private:
  RankLog(std::string path, UniqueFd fd, bool readable)
      : path_(std::move(path)), fd_(std::move(fd)), readable_(readable) {}
  void record(ssize_t written);

  std::string path_;
  UniqueFd fd_;
  bool readable_;
  bool tracking_ = false;
  std::deque<Range> own_writes_;
};

}  // namespace aml
