#include "supervisor/log_tail.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "supervisor/rank_log.hpp"
#include "util/own_fd_path.hpp"

namespace aml {
namespace {

constexpr int kLogReadsPerWakeup = 8;  // then let the other workers have their turn

}  // namespace

LogTail::LogTail(RankLog& log, StreamSinks console)
    : log_(log), relay_(std::move(console)), offset_(log.size()) {
  log_.track_own_writes(offset_);
}

LogTail::~LogTail() {
  if (open_) log_.stop_tracking();
}

bool LogTail::watch_with(int inotify_fd) {
  // Through the launcher's own descriptor: the file, even if its name has moved.
  watch_ = inotify_add_watch(inotify_fd, own_fd_path(log_.fd()).c_str(), IN_MODIFY);
  if (watch_ < 0) watch_ = inotify_add_watch(inotify_fd, log_.path().c_str(), IN_MODIFY);
  if (watch_ < 0) return false;
  inotify_fd_ = inotify_fd;
  return true;
}

void LogTail::read_to_end_and_close() {
  closing_ = true;
  close_at_ = log_.size();
  pending_ = true;
}

std::size_t LogTail::drain() {
  std::size_t workers_bytes = 0;
  std::span<char> buffer = relay_read_buffer();
  for (int reads = 0; reads < kLogReadsPerWakeup && pending(); ++reads) {
    std::size_t want = buffer.size();
    if (closing_) want = static_cast<std::size_t>(std::clamp<off_t>(close_at_ - offset_, 0, want));
    ssize_t n = want == 0 ? 0 : pread(log_.fd(), buffer.data(), want, offset_);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) workers_bytes += relay(buffer.data(), offset_, offset_ + n);
    if (n <= 0 || static_cast<std::size_t>(n) < buffer.size()) {
      // At the end for now: the next write is reported (after its bytes are in the file).
      pending_ = false;
      if (closing_) close();
    }
  }
  return workers_bytes;
}

std::size_t LogTail::relay(const char* data, off_t from, off_t to) {
  std::size_t workers_bytes = 0;
  auto& own = log_.own_writes();  // in file order: skipped, and dropped once passed
  off_t at = from;
  while (at < to) {
    while (!own.empty() && own.front().end <= at) own.pop_front();
    if (!own.empty() && own.front().begin <= at) {
      at = std::min(to, own.front().end);
      continue;
    }
    off_t stop = own.empty() ? to : std::min(to, own.front().begin);
    relay_.consume(std::string_view(data + (at - from), static_cast<std::size_t>(stop - at)));
    workers_bytes += static_cast<std::size_t>(stop - at);
    at = stop;
  }
  offset_ = to;
  return workers_bytes;
}

void LogTail::close() {
  relay_.finish();
  if (watch_ >= 0) inotify_rm_watch(inotify_fd_, watch_);
  watch_ = -1;
  log_.stop_tracking();
  open_ = false;
}

}  // namespace aml
