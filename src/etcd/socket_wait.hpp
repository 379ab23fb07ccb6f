// Waiting on a socket until a deadline, for etcd's connections (HTTP and TLS alike).
#pragma once

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace aml::etcd {

// A thread may name a descriptor whose readiness ends its waits at once, as if their deadline
// had passed: the lease keeper's stop (lease_keeper.hpp), which must not wait out a call to an
// etcd that does not answer. -1: none.
inline thread_local int wait_cancel_fd = -1;

// Milliseconds left until the deadline, for poll (0 once it passed).
inline int ms_until(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, 1 << 30));
}

// Whether this thread's waits were cancelled (wait_cancel_fd is readable).
inline bool wait_cancelled() {
  if (wait_cancel_fd < 0) return false;
  pollfd p{wait_cancel_fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

// Waits for `events` on fd until the deadline: false when it passed, or the waits of this
// thread were cancelled.
inline bool ready(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  pollfd p[2] = {{fd, events, 0}, {wait_cancel_fd, POLLIN, 0}};
  const nfds_t count = wait_cancel_fd >= 0 ? 2 : 1;
  for (;;) {
    int n = poll(p, count, ms_until(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n > 0 && p[1].revents != 0 && count == 2) return false;
    return n > 0;
  }
}

}  // namespace aml::etcd
