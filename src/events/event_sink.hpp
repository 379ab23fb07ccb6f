// One file of event lines (events/event_log.hpp writes them): opened for appending, each burst
// of lines in one write(2), rotated at a bound (FILE.1 keeps the part before). A write that
// fails is said once, naming the flag that asked for the file, and the file is written no more:
// the job goes on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "aml/error.hpp"
#include "util/unique_fd.hpp"

namespace aml {

class EventSink {
 public:
  // Opens (or creates) `path` for appending, its folder made where missing; an error names
  // `flag` (--events-file, --job-events-file).
  static Result<std::unique_ptr<EventSink>> open(std::string path, std::string flag,
                                                 std::uint64_t rotate_bytes);

  void append(std::string_view lines);
  bool failed() const { return failed_; }
  const std::string& path() const { return path_; }

 private:
  EventSink(std::string path, std::string flag, UniqueFd fd, std::uint64_t size,
            std::uint64_t rotate_bytes);
  bool rotate();

  std::string path_;
  std::string flag_;
  UniqueFd fd_;
  std::uint64_t size_;
  std::uint64_t rotate_bytes_;
  bool failed_ = false;
};

}  // namespace aml
