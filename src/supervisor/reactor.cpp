#include "supervisor/reactor.hpp"

#include <sys/epoll.h>

#include <algorithm>

namespace aml {

Reactor::Reactor() : epoll_(epoll_create1(EPOLL_CLOEXEC)) {}

void Reactor::add(int fd, std::uint32_t events, Handler handler) {
  if (fd < 0) return;
  epoll_event event{};
  event.events = events;
  event.data.fd = fd;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
    epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &event);  // a number reused after a close
  }
  handlers_[fd] = std::move(handler);
}

void Reactor::change(int fd, std::uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.fd = fd;
  epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &event);
}

void Reactor::remove(int fd) {
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  handlers_.erase(fd);
}

void Reactor::wait(std::optional<Clock::time_point> until) {
  int timeout_ms = -1;
  if (until) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*until - Clock::now());
    // One millisecond more: epoll rounds down, and waking just before a deadline would spin.
    timeout_ms = static_cast<int>(std::clamp<long long>(left.count() + 1, 0, 3600 * 1000));
  }
  epoll_event events[64];
  const int n = epoll_wait(epoll_.get(), events, 64, timeout_ms);
  for (int i = 0; i < n; ++i) {
    // Looked up at each event: an earlier handler of this batch may have removed it.
    auto handler = handlers_.find(events[i].data.fd);
    if (handler != handlers_.end()) {
      Handler copy = handler->second;  // the handler may remove itself
      copy(events[i].events);
    }
  }
}

}  // namespace aml
