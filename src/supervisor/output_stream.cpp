#include "supervisor/output_stream.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "util/write_all.hpp"

namespace aml {
namespace {

constexpr std::size_t kReadSize = 256 * 1024;
constexpr int kReadsPerWakeup = 8;  // then let the other workers' pipes have their turn
constexpr std::size_t kMaxLine = 4 * 1024 * 1024;  // a longer "line" is written out in pieces
constexpr std::size_t kTailBytes = 64 * 1024;
constexpr std::size_t kTailLines = 20;

// The shared read buffer: one launcher thread, one read at a time.
std::array<char, kReadSize>& read_buffer() {
  static std::array<char, kReadSize> buffer;
  return buffer;
}

}  // namespace

OutputStream::OutputStream(UniqueFd pipe, StreamSinks sinks)
    : pipe_(std::move(pipe)), sinks_(std::move(sinks)) {}

void OutputStream::drain() {
  auto& buffer = read_buffer();
  for (int reads = 0; reads < kReadsPerWakeup && pipe_; ++reads) {
    ssize_t n = ::read(pipe_.get(), buffer.data(), buffer.size());
    if (n > 0) {
      consume(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      if (static_cast<std::size_t>(n) < buffer.size()) return;  // the pipe is empty for now
    } else if (n == 0) {
      finish();
    } else if (errno != EINTR) {
      if (errno != EAGAIN) finish();
      return;
    }
  }
}

void OutputStream::consume(std::string_view data) {
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
  std::string_view whole = data.substr(0, last_newline + 1);
  if (partial_.empty()) {
    emit(whole);
  } else {
    partial_.append(whole);
    emit(partial_);
    partial_.clear();
  }
  partial_.append(data.substr(last_newline + 1));
}

void OutputStream::emit(std::string_view lines) {
  if (sinks_.log_fd >= 0) write_all(sinks_.log_fd, lines);
  if (sinks_.console_fd >= 0) {
    if (sinks_.tag.empty()) {
      write_all(sinks_.console_fd, lines);
    } else {
      write_tagged(lines);
    }
  }
  if (sinks_.keep_tail) {
    tail_.append(lines.size() > kTailBytes ? lines.substr(lines.size() - kTailBytes) : lines);
    if (tail_.size() > 2 * kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
  }
}

void OutputStream::write_tagged(std::string_view lines) {
  // Tag and line as separate pieces of one writev: the lines are not copied in user space.
  constexpr int kPieces = 1024;
  iovec pieces[kPieces];
  int used = 0;
  std::size_t start = 0;
  while (start < lines.size()) {
    std::size_t end = lines.find('\n', start) + 1;
    pieces[used++] = {const_cast<char*>(sinks_.tag.data()), sinks_.tag.size()};
    pieces[used++] = {const_cast<char*>(lines.data() + start), end - start};
    start = end;
    if (used == kPieces) {
      writev_all(sinks_.console_fd, pieces, used);
      used = 0;
    }
  }
  if (used > 0) writev_all(sinks_.console_fd, pieces, used);
}

void OutputStream::finish() {
  if (!partial_.empty()) {
    // The worker's last line had no newline: the log keeps its bytes as they were, the
    // console gets a newline so that the next tagged line starts on a line of its own.
    if (sinks_.log_fd >= 0) write_all(sinks_.log_fd, partial_);
    partial_.push_back('\n');
    const int log_fd = std::exchange(sinks_.log_fd, -1);
    emit(partial_);
    sinks_.log_fd = log_fd;
    partial_.clear();
  }
  pipe_.reset();
}

std::vector<std::string> OutputStream::tail(std::size_t count) const {
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
