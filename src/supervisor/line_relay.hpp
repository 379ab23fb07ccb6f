// Where one output stream of one worker goes, line by line: the console (tagged), the rank's
// log file, and its last lines for the failure summary. Lines of different workers never mix,
// whatever the sizes of the pieces the bytes arrive in.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aml {

class Console;
class RankLog;

struct StreamSinks {
  Console* console = nullptr;  // where lines are shown; null when this rank is filtered out
  std::string tag;             // put before every console line ("" for none)
  RankLog* log = nullptr;      // the rank's log file, written untagged; null for none
  bool keep_tail = false;      // remember the last lines (stderr, for the failure summary)
};

class LineRelay {
 public:
  explicit LineRelay(StreamSinks sinks) : sinks_(std::move(sinks)) {}

  // The next bytes of the stream, in any pieces.
  void consume(std::string_view data);
  // The stream ended: a partial last line goes out (with a newline added on the console;
  // the log keeps the bytes as they were).
  void finish();

  // The last `count` lines seen (only with keep_tail), at most 20.
  std::vector<std::string> tail(std::size_t count) const;
  // From now on also keeps what arrives, up to `max_bytes` (a hung rank's faulthandler dump).
  void capture(std::size_t max_bytes) { capture_room_ = max_bytes; }
  const std::string& captured() const { return captured_; }

 private:
  // Whole lines, in two pieces so that a line completed across reads need not be joined
  // with the rest of the buffer.
  void emit(std::string_view first, std::string_view rest = {});
  void write_tagged(std::string_view whole_lines);

  StreamSinks sinks_;
  std::string partial_;  // bytes after the last newline, waiting for the rest of their line
  std::string tail_;
  std::size_t capture_room_ = 0;
  std::string captured_;
};

// The launcher's one read buffer (one thread, one read at a time), shared by every stream.
std::span<char> relay_read_buffer();

}  // namespace aml
