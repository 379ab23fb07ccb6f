#include "supervisor/console.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "util/own_fd_path.hpp"

namespace aml {

Console::Console(int fd) : fd_(fd) {
  struct stat info {};
  if (fstat(fd, &info) != 0) return;
  if (S_ISSOCK(info.st_mode)) {
    socket_ = true;
  } else if (S_ISFIFO(info.st_mode) || (S_ISCHR(info.st_mode) && isatty(fd))) {
    // O_NONBLOCK on the shared description would reach whoever else writes there (the shell
    // after we exit); a description of our own keeps it to us.
    own_.reset(open(own_fd_path(fd).c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  }
}

ssize_t Console::try_write(std::string_view data) {
  for (;;) {
    ssize_t n = socket_ ? send(fd_, data.data(), data.size(), MSG_DONTWAIT | MSG_NOSIGNAL)
                        : ::write(fd(), data.data(), data.size());
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

void Console::write(std::string_view first, std::string_view rest) {
  if (given_up_) return;
  for (std::string_view data : {first, rest}) {
    if (!pending_.empty()) {
      pending_.append(data);  // behind what waits: order is kept
      continue;
    }
    while (!data.empty()) {
      ssize_t n = try_write(data);
      if (n < 0) return;  // gone (EPIPE): nothing more to show there
      if (n == 0) {
        pending_.assign(data);
        break;
      }
      data.remove_prefix(static_cast<std::size_t>(n));
      last_progress_ = std::chrono::steady_clock::now();
    }
  }
}

bool Console::flush() {
  std::size_t done = 0;
  while (done < pending_.size()) {
    ssize_t n = try_write(std::string_view(pending_).substr(done));
    if (n < 0) {
      done = pending_.size();
      break;
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done > 0) last_progress_ = std::chrono::steady_clock::now();
  pending_.erase(0, done);
  return pending_.empty();
}

bool write_within(int fd, std::string_view text, std::chrono::milliseconds patience) {
  using Clock = std::chrono::steady_clock;
  Console console(fd);
  console.write(text);
  const Clock::time_point deadline = Clock::now() + patience;
  while (console.blocked()) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd room{console.fd(), POLLOUT, 0};
    if (poll(&room, 1, static_cast<int>(left)) < 0 && errno != EINTR) return false;
    console.flush();
  }
  return true;
}

void Console::give_up() {
  given_up_ = true;
  pending_.clear();
  pending_.shrink_to_fit();
}

}  // namespace aml
