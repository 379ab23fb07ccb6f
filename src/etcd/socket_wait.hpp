// Waiting on a socket until a deadline, for etcd's connections (HTTP and TLS alike).
#pragma once

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace aml::etcd {

// Milliseconds left until the deadline, for poll (0 once it passed).
inline int ms_until(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, 1 << 30));
}

// Waits for `events` on fd until the deadline: false when it passed.
inline bool ready(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    int n = poll(&p, 1, ms_until(deadline));
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

}  // namespace aml::etcd
