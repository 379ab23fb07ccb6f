#include "supervisor/rank_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "util/own_fd_path.hpp"
#include "util/write_all.hpp"

namespace aml {

std::unique_ptr<RankLog> RankLog::create(const std::string& path) {
  constexpr int kFlags = O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC;
  bool readable = true;
  UniqueFd fd(open(path.c_str(), O_RDWR | kFlags, 0644));
  if (!fd && errno == EACCES) {
    // Writable but not readable (a file someone else made): log it, relay through pipes.
    readable = false;
    fd.reset(open(path.c_str(), O_WRONLY | kFlags, 0644));
  }
  if (!fd) return nullptr;
  return std::unique_ptr<RankLog>(new RankLog(path, std::move(fd), readable));
}

off_t RankLog::size() const {
  struct stat info {};
  return fstat(fd_.get(), &info) == 0 ? info.st_size : 0;
}

UniqueFd RankLog::open_for_worker() const {
  // The same file through our own descriptor, not by its name, which may have moved.
  UniqueFd fd(open(own_fd_path(fd_.get()).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!fd) fd.reset(open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  return fd;
}

void RankLog::append(std::string_view first, std::string_view rest) {
  iovec pieces[2] = {{const_cast<char*>(first.data()), first.size()},
                     {const_cast<char*>(rest.data()), rest.size()}};
  iovec* next = pieces;
  int count = rest.empty() ? 1 : 2;
  while (count > 0) {
    ssize_t n = ::writev(fd_.get(), next, count);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // a full disk: the console still gets the lines
    }
    record(n);
    skip_written(next, count, static_cast<std::size_t>(n));
  }
}

void RankLog::record(ssize_t written) {
  if (!tracking_ || written <= 0) return;
  // An appending write moves this description's offset to the end of what it wrote, even
  // while a worker appends through its own description.
  off_t end = lseek(fd_.get(), 0, SEEK_CUR);
  if (end < written) return;
  off_t begin = end - written;
  if (!own_writes_.empty() && own_writes_.back().end == begin) {
    own_writes_.back().end = end;
  } else {
    own_writes_.push_back({begin, end});
  }
}

void RankLog::track_own_writes(off_t from) {
  tracking_ = true;
  while (!own_writes_.empty() && own_writes_.front().end <= from) own_writes_.pop_front();
}

void RankLog::stop_tracking() {
  tracking_ = false;
  own_writes_.clear();
}

}  // namespace aml
