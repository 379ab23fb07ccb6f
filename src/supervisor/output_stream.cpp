#include "supervisor/output_stream.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
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

void OutputStream::emit(std::string_view first, std::string_view rest) {
  if (sinks_.log_fd >= 0) write_pieces(sinks_.log_fd, first, rest);
  if (sinks_.console_fd >= 0) {
    if (sinks_.tag.empty()) {
      write_pieces(sinks_.console_fd, first, rest);
    } else {
      // One copy into a buffer with the tags, one write: cheaper than a writev of two pieces
      // per line, whose per-piece cost dominates for short lines.
      tagged_size_ = 0;
      append_tagged(first);
      append_tagged(rest);
      write_all(sinks_.console_fd, std::string_view(tagged_.get(), tagged_size_));
    }
  }
  if (sinks_.keep_tail) {
    for (std::string_view lines : {first, rest}) {
      tail_.append(lines.size() > kTailBytes ? lines.substr(lines.size() - kTailBytes) : lines);
    }
    if (tail_.size() > 2 * kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
  }
}

void OutputStream::append_tagged(std::string_view lines) {
  // Raw copies into a buffer that only grows: per-line string appends cost more than the
  // bytes themselves.
  const std::string_view tag = sinks_.tag;
  std::size_t start = 0;
  while (start < lines.size()) {
    const char* line = lines.data() + start;
    const void* newline = std::memchr(line, '\n', lines.size() - start);
    const std::size_t length =
        static_cast<std::size_t>(static_cast<const char*>(newline) - line) + 1;
    if (tagged_size_ + tag.size() + length > tagged_capacity_) {
      grow_tagged(tagged_size_ + tag.size() + (lines.size() - start) + 64 * tag.size());
    }
    char* out = tagged_.get() + tagged_size_;
    std::memcpy(out, tag.data(), tag.size());
    std::memcpy(out + tag.size(), line, length);
    tagged_size_ += tag.size() + length;
    start += length;
  }
}

void OutputStream::grow_tagged(std::size_t at_least) {
  tagged_capacity_ = std::max(at_least, 2 * tagged_capacity_);
  auto bigger = std::make_unique_for_overwrite<char[]>(tagged_capacity_);
  if (tagged_size_ > 0) std::memcpy(bigger.get(), tagged_.get(), tagged_size_);
  tagged_ = std::move(bigger);
}

void OutputStream::write_pieces(int fd, std::string_view first, std::string_view rest) {
  if (rest.empty()) {
    write_all(fd, first);
    return;
  }
  iovec pieces[2] = {{const_cast<char*>(first.data()), first.size()},
                     {const_cast<char*>(rest.data()), rest.size()}};
  writev_all(fd, pieces, 2);
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
  if (epoll_fd_ >= 0) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, pipe_.get(), nullptr);
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
