// The store core's connections: the loop, accepting and reading, replies and closing. Every
// protocol question (who is admitted, what the bytes mean) is its door's.
#include "store/core/store_core.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "net/address_text.hpp"

namespace aml::store {

namespace {

// The epoll keys of the server's own descriptors; a connection's key is its id (from 1).
constexpr std::uint64_t kListenerEvent = 0;
constexpr std::uint64_t kWakeupEvent = ~0ull;

// At most this many new connections a turn of the loop: the members' requests come between.
constexpr int kAcceptsPerTurn = 128;

// The loop slept this much longer than it asked to: its process was paused or starved, and
// the clients' silence meanwhile is not theirs.
constexpr std::chrono::milliseconds kLoopStall{1000};

// Output buffer room a connection keeps between replies.
constexpr std::size_t kKeptOutput = 4096;

void watch(int epoll, int fd, std::uint64_t key, std::uint32_t events, int op) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = key;
  epoll_ctl(epoll, op, fd, &event);
}

}  // namespace

StoreCore::StoreCore(UniqueFd listener, UniqueFd epoll, UniqueFd wakeup, int port,
                     ServerOptions options)
    : listener_(std::move(listener)),
      epoll_(std::move(epoll)),
      wakeup_(std::move(wakeup)),
      port_(port),
      options_(std::move(options)),
      refusals_(options_.log),
      next_check_(Clock::now() +
                  std::min<Clock::duration>(options_.stall_timeout, options_.handshake_timeout)) {
  if (listener_) watch(epoll_.get(), listener_.get(), kListenerEvent, EPOLLIN, EPOLL_CTL_ADD);
  watch(epoll_.get(), wakeup_.get(), kWakeupEvent, EPOLLIN, EPOLL_CTL_ADD);
}

StoreCore::~StoreCore() = default;

Connection* StoreCore::find(std::uint64_t id) {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

std::size_t StoreCore::connection_memory() const {
  std::size_t bytes = 0;
  for (const auto& [id, c] : connections_) {
    bytes += sizeof(Connection) + c->out.capacity() + sizeof(std::pair<std::uint64_t, void*>) * 2 +
             (c->state ? c->state->bytes() : 0);
  }
  return connections_.empty() ? 0 : bytes / connections_.size();
}

int StoreCore::next_timeout_ms(int requested) const {
  auto until = [](Clock::time_point when) {
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(when - Clock::now()).count() + 1;
    return static_cast<int>(std::max<long long>(0, std::min<long long>(ms, 1 << 30)));
  };
  int timeout = until(next_check_);
  if (!deadlines_.empty()) timeout = std::min(timeout, until(deadlines_.begin()->first));
  if (int door = door_->wake_within_ms(); door >= 0) timeout = std::min(timeout, door);
  return requested < 0 ? timeout : std::min(timeout, requested);
}

void StoreCore::poll_once(int timeout_ms) {
  epoll_event events[256];
  const int timeout = next_timeout_ms(timeout_ms);
  const auto asleep = Clock::now();
  int n = epoll_wait(epoll_.get(), events, 256, timeout);
  if (Clock::now() - asleep > std::chrono::milliseconds(timeout) + kLoopStall) {
    resumed_ = Clock::now();
  }
  handle_events(events, n);
  expire_deadlines();
  door_->turn();
  if (Clock::now() >= next_check_) check(Clock::now());
}

// The job's members first: a flood of strangers (new connections, junk, handshakes) waits
// behind them, never the other way round.
void StoreCore::handle_events(const epoll_event* events, int n) {
  auto is_member = [&](std::uint64_t id) {
    auto it = connections_.find(id);
    return it != connections_.end() && it->second->member;
  };
  bool accept_now = false;
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = events[i].data.u64;
      if (id == kListenerEvent) {
        accept_now = true;
        continue;
      }
      if (id == kWakeupEvent) {
        if (pass == 0) {
          std::uint64_t count;
          while (read(wakeup_.get(), &count, sizeof(count)) > 0) {
          }
          take_adopted();
        }
        continue;
      }
      if ((pass == 0) != is_member(id)) continue;
      if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(id);
      if (events[i].events & EPOLLOUT) send_now(id);
    }
  }
  if (accept_now) accept_all();
}

void StoreCore::run() {
  while (!stopping_.load(std::memory_order_acquire)) poll_once(-1);
}

void StoreCore::stop() {
  stopping_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wakeup_.get(), &one, sizeof(one));
}

void StoreCore::accept_all() {
  for (int accepted = 0; accepted < kAcceptsPerTurn; ++accepted) {
    sockaddr_storage from{};
    socklen_t from_length = sizeof(from);
    int fd = accept4(listener_.get(), reinterpret_cast<sockaddr*>(&from), &from_length,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if ((errno == EMFILE || errno == ENFILE) && door_->make_room()) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Nothing to evict: leave the rest in the backlog until the next check, rather than
        // wake for them at once again.
        watch(epoll_.get(), listener_.get(), kListenerEvent, 0, EPOLL_CTL_MOD);
        listener_paused_ = true;
      }
      return;  // EAGAIN: no more for now
    }
    if (connections_.size() >= options_.max_connections) {
      ::close(fd);
      continue;
    }
    std::string peer = address_text(reinterpret_cast<const sockaddr*>(&from));
    if (!door_->admits(peer)) {
      ::close(fd);
      continue;
    }
    door_->opened(add_connection(UniqueFd(fd), std::move(peer)));
  }
}

Connection& StoreCore::add_connection(UniqueFd fd, std::string peer) {
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  auto c = std::make_unique<Connection>();
  c->id = next_id_++;
  c->fd = std::move(fd);
  c->last_progress = c->accepted_at = Clock::now();
  c->peer = std::move(peer);
  watch(epoll_.get(), c->fd.get(), c->id, EPOLLIN, EPOLL_CTL_ADD);
  return *connections_.emplace(c->id, std::move(c)).first->second;
}

Connection& StoreCore::add_carried(std::string peer) {
  auto c = std::make_unique<Connection>();
  c->id = next_id_++;
  c->last_progress = c->accepted_at = Clock::now();
  c->peer = std::move(peer);
  return *connections_.emplace(c->id, std::move(c)).first->second;
}

void StoreCore::adopt(UniqueFd fd, std::string peer, std::string first_bytes) {
  {
    std::lock_guard lock(adopted_mutex_);
    adopted_.push_back({std::move(fd), std::move(peer), std::move(first_bytes)});
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wakeup_.get(), &one, sizeof(one));
}

void StoreCore::take_adopted() {
  std::vector<Adopted> taken;
  {
    std::lock_guard lock(adopted_mutex_);
    taken.swap(adopted_);
  }
  for (Adopted& a : taken) {
    if (connections_.size() >= options_.max_connections) continue;  // closed as it goes
    Connection& c = add_connection(std::move(a.fd), std::move(a.peer));
    const std::uint64_t id = c.id;
    door_->opened(c);
    door_->received(c, a.bytes);
    if (exists(id)) door_->serve(c);
  }
}

void StoreCore::on_readable(std::uint64_t id) {
  Connection* c = find(id);
  if (!c) return;
  char buffer[kReadBytes];
  while (true) {
    ssize_t n = recv(c->fd.get(), buffer, sizeof(buffer), 0);
    if (n > 0) {
      c->last_progress = Clock::now();
      door_->received(*c, std::string_view(buffer, static_cast<std::size_t>(n)));
      if (!exists(id)) return;
      if (static_cast<std::size_t>(n) < sizeof(buffer)) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    door_->ended(*c);  // end of stream or a socket error
    return close(id);
  }
  door_->serve(*c);
}

bool StoreCore::catch_up(Connection& c) {
  int waiting = 0;
  if (!c.fd || ioctl(c.fd.get(), FIONREAD, &waiting) != 0 || waiting <= 0) return false;
  on_readable(c.id);
  return true;
}

void StoreCore::check(Clock::time_point now) {
  next_check_ = now + std::min<Clock::duration>({options_.stall_timeout, options_.handshake_timeout,
                                                 std::chrono::seconds(1)});
  if (listener_paused_) {
    listener_paused_ = false;
    watch(epoll_.get(), listener_.get(), kListenerEvent, EPOLLIN, EPOLL_CTL_MOD);
  }
  door_->check(now);
  refusals_.flush(now);
  // A member is dropped only where it stalls in the middle of a request. A look at every
  // connection (thousands at rest, each a cache miss) a quarter of the stall timeout apart: a
  // stalled one goes within 1.25 times that.
  if (now < next_stall_scan_) return;
  next_stall_scan_ = now + options_.stall_timeout / 4;
  std::vector<std::uint64_t> stalled;
  for (const auto& [id, c] : connections_) {
    if (c->member && now - c->last_progress >= options_.stall_timeout && door_->mid_request(*c))
      stalled.push_back(id);
  }
  for (std::uint64_t id : stalled) close(id);
}

void StoreCore::refused(const std::string& peer, const std::string& why) {
  refusals_.refused(peer, why, Clock::now());
}

void StoreCore::reply(Connection& c, std::string_view frame) {
  if (!c.fd) return door_->reply_carried(c, frame);
  if (c.out_offset == c.out.size()) {
    c.out.clear();
    c.out_offset = 0;
  }
  c.out.append(frame);
  if (c.out.size() - c.out_offset > options_.max_pending_output) return close(c.id);
  send_now(c.id);
}

void StoreCore::send_now(std::uint64_t id) {
  Connection* found = find(id);
  if (!found || !found->fd) return;
  Connection& c = *found;
  while (c.out_offset < c.out.size()) {
    ssize_t n =
        send(c.fd.get(), c.out.data() + c.out_offset, c.out.size() - c.out_offset, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_offset += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return close(id);
  }
  bool pending = c.out_offset < c.out.size();
  if (!pending && c.close_after_send) return close(id);
  if (!pending && c.out.capacity() > kKeptOutput) {
    // A large reply (a 1,024-node verdict is 200 KB, sent to every node) is not kept once
    // sent: kept per connection it made node 0's memory grow with the square of the nodes.
    std::string().swap(c.out);
    c.out_offset = 0;
  }
  if (pending != c.want_write) {
    c.want_write = pending;
    watch(epoll_.get(), c.fd.get(), id, EPOLLIN | (pending ? EPOLLOUT : 0u), EPOLL_CTL_MOD);
  }
}

void StoreCore::close(std::uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  if (it->second->waiting) forget_wait(*it->second);
  std::unique_ptr<Connection> gone = std::move(it->second);
  connections_.erase(it);
  // Gone first: what its door does now (a last will that wakes waiters, a trunk's streams
  // closed with it) may close other connections, never this one again.
  door_->closed(*gone);
}

UniqueFd StoreCore::release(Connection& c) {
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
  UniqueFd fd = std::move(c.fd);
  close(c.id);
  return fd;
}

}  // namespace aml::store
