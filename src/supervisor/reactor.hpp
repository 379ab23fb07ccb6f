// The supervisor's one loop (DESIGN §4): it owns the file descriptors and the time, and hands
// each event to the component that registered for it. A handler never blocks: a slow tool is
// a child process whose output comes back here as one more event.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>

#include "util/unique_fd.hpp"

namespace aml {

class Reactor {
 public:
  using Clock = std::chrono::steady_clock;
  using Handler = std::function<void(std::uint32_t events)>;

  Reactor();

  // `events`: EPOLLIN, EPOLLOUT...; 0 keeps the descriptor registered but wakes for nothing.
  void add(int fd, std::uint32_t events, Handler handler);
  void change(int fd, std::uint32_t events);
  void remove(int fd);
  // For a component that must take its descriptor out itself before closing it.
  int epoll_fd() const { return epoll_.get(); }

  // Waits for events until `until` at the latest (nullopt: no limit) and hands each to its
  // handler. Interrupted by a signal, it returns with nothing handled.
  void wait(std::optional<Clock::time_point> until);

 private:
  UniqueFd epoll_;
  std::unordered_map<int, Handler> handlers_;
};

// The earlier of two deadlines, either of which may be missing.
inline std::optional<Reactor::Clock::time_point> earliest(
    std::optional<Reactor::Clock::time_point> a, std::optional<Reactor::Clock::time_point> b) {
  if (!a) return b;
  if (!b) return a;
  return *a < *b ? a : b;
}

}  // namespace aml
