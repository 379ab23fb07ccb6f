#include "supervisor/line_relay.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "supervisor/console.hpp"
#include "supervisor/rank_log.hpp"
#include "supervisor/tag_lines.hpp"

namespace aml {
namespace {

constexpr std::size_t kMaxLine = 4 * 1024 * 1024;  // a longer "line" is written out in pieces
constexpr std::size_t kTailBytes = 64 * 1024;
constexpr std::size_t kTailLines = 20;

}  // namespace

std::span<char> relay_read_buffer() {
  static std::array<char, 256 * 1024> buffer;
  return buffer;
}

void LineRelay::consume(std::string_view data) {
  if (captured_.size() < capture_room_) {
    captured_.append(data.substr(0, capture_room_ - captured_.size()));
  }
  std::size_t last_newline = data.rfind('\n');
  if (last_newline == std::string_view::npos) {
    partial_.append(data);
    if (partial_.size() >= kMaxLine) {
      partial_.push_back('\n');
      emit(partial_);
      partial_.clear();
    }
    return;
  }
  if (partial_.empty()) {
    emit(data.substr(0, last_newline + 1));
  } else {
    // Only the line that was cut between two reads is copied; the rest goes out from the
    // read buffer as it is.
    std::size_t first_newline = data.find('\n');
    partial_.append(data.substr(0, first_newline + 1));
    emit(partial_, data.substr(first_newline + 1, last_newline - first_newline));
    partial_.clear();
  }
  partial_.append(data.substr(last_newline + 1));
}

void LineRelay::emit(std::string_view first, std::string_view rest) {
  if (sinks_.log != nullptr) sinks_.log->append(first, rest);
  if (sinks_.console != nullptr) {
    if (sinks_.tag.empty()) {
      sinks_.console->write(first, rest);
    } else {
      // One copy into a buffer with the tags, one write: cheaper than a writev of two pieces
      // per line, whose per-piece cost dominates for short lines.
      write_tagged(first);
      write_tagged(rest);
    }
  }
  if (sinks_.keep_tail) {
    for (std::string_view lines : {first, rest}) {
      tail_.append(lines.size() > kTailBytes ? lines.substr(lines.size() - kTailBytes) : lines);
    }
    if (tail_.size() > 2 * kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
  }
}

void LineRelay::write_tagged(std::string_view lines) {
  // The launcher's one tagging buffer (one thread): no buffer per stream to grow.
  static std::array<char, 256 * 1024> buffer;
  const std::string_view tag = sinks_.tag;
  while (!lines.empty()) {
    TaggedLines done = tag_lines(lines, tag, buffer.data(), buffer.size());
    if (done.consumed == 0) {
      // One line longer than the buffer: as it is, after its tag.
      std::size_t length = lines.find('\n') + 1;
      sinks_.console->write(tag, lines.substr(0, length));
      done.consumed = length;
    } else {
      sinks_.console->write(std::string_view(buffer.data(), done.written));
    }
    lines.remove_prefix(done.consumed);
  }
}

void LineRelay::finish() {
  if (partial_.empty()) return;
  if (sinks_.log != nullptr) sinks_.log->append(partial_);
  partial_.push_back('\n');
  RankLog* log = std::exchange(sinks_.log, nullptr);
  emit(partial_);
  sinks_.log = log;
  partial_.clear();
}

std::vector<std::string> LineRelay::tail(std::size_t count) const {
  std::vector<std::string> lines;
  std::size_t end = tail_.size();
  if (end > 0 && tail_[end - 1] == '\n') --end;
  while (lines.size() < std::min(count, kTailLines) && end > 0) {
    std::size_t start = tail_.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    lines.insert(lines.begin(), tail_.substr(start, end - start));
    end = start == 0 ? 0 : start - 1;
  }
  return lines;
}

}  // namespace aml
