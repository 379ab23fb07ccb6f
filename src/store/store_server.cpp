#include "store/store_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace aml::store {

namespace {

constexpr std::uint64_t kListenerKey = 0;
constexpr std::uint64_t kWakeupKey = ~0ull;
constexpr std::uint32_t kForever = 0xffffffffu;

Error socket_error(const std::string& what, const std::string& where) {
  return invalid("store " + what, where, std::string("to work (") + std::strerror(errno) + ")");
}

std::string status_frame(Status status) {
  return FrameWriter().u8(static_cast<std::uint8_t>(status)).finish();
}

}  // namespace

struct StoreServer::Connection {
  std::uint64_t id = 0;
  UniqueFd fd;
  FrameDecoder decoder;
  std::string out;
  std::size_t out_offset = 0;
  bool authenticated = false;
  bool close_after_send = false;
  bool want_write = false;
  // A blocked get or wait.
  bool waiting = false;
  std::uint64_t wait_seq = 0;
  Opcode wait_op{};
  std::vector<std::string> wait_keys;
  // Its entry in the deadline queue, when the wait has a timeout.
  std::optional<std::multimap<Clock::time_point, std::pair<std::uint64_t, std::uint64_t>>::iterator>
      deadline;
  Clock::time_point last_progress;  // its last bytes in: what silent() measures
  std::string watched_as;           // identify: the name silent() gives for it
  // Set (if absent) when the connection closes: key, value.
  std::optional<std::pair<std::string, std::string>> last_will;

  explicit Connection(std::uint32_t max_frame) : decoder(max_frame) {}
};

Result<std::unique_ptr<StoreServer>> StoreServer::listen(const std::string& bind_address, int port,
                                                         ServerOptions options) {
  const std::string where = bind_address + ":" + std::to_string(port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, bind_address.c_str(), &addr.sin_addr) != 1) {
    return invalid("store address", bind_address, "an IPv4 address to listen on");
  }
  UniqueFd listener(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener) return socket_error("socket", where);
  int one = 1;
  setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return socket_error("bind", where);
  }
  if (::listen(listener.get(), SOMAXCONN) != 0) return socket_error("listen", where);
  socklen_t length = sizeof(addr);
  getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &length);
  UniqueFd epoll(epoll_create1(EPOLL_CLOEXEC));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kListenerKey;
  epoll_ctl(epoll.get(), EPOLL_CTL_ADD, listener.get(), &event);
  UniqueFd wakeup(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wakeup) return socket_error("eventfd", where);
  event.data.u64 = kWakeupKey;
  epoll_ctl(epoll.get(), EPOLL_CTL_ADD, wakeup.get(), &event);
  return std::unique_ptr<StoreServer>(new StoreServer(std::move(listener), std::move(epoll),
                                                      std::move(wakeup), ntohs(addr.sin_port),
                                                      std::move(options)));
}

StoreServer::StoreServer(UniqueFd listener, UniqueFd epoll, UniqueFd wakeup, int port,
                         ServerOptions options)
    : listener_(std::move(listener)),
      epoll_(std::move(epoll)),
      wakeup_(std::move(wakeup)),
      port_(port),
      options_(std::move(options)),
      next_stall_check_(Clock::now() + options_.stall_timeout) {}

StoreServer::~StoreServer() = default;

std::size_t StoreServer::connection_memory() const {
  std::size_t bytes = 0;
  for (const auto& [id, c] : connections_) {
    bytes += sizeof(Connection) + c->out.capacity() + sizeof(std::pair<std::uint64_t, void*>) * 2;
  }
  return connections_.empty() ? 0 : bytes / connections_.size();
}

std::size_t StoreServer::pending_wait_entries() const {
  std::size_t entries = deadlines_.size();
  for (const auto& [key, waiting] : waiters_) entries += waiting.size();
  return entries;
}

int StoreServer::next_timeout_ms(int requested) const {
  auto until = [](Clock::time_point when) {
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(when - Clock::now()).count() + 1;
    return static_cast<int>(std::max<long long>(0, std::min<long long>(ms, 1 << 30)));
  };
  int timeout = until(next_stall_check_);
  if (!deadlines_.empty()) timeout = std::min(timeout, until(deadlines_.begin()->first));
  return requested < 0 ? timeout : std::min(timeout, requested);
}

// The loop slept this much longer than it asked to: its process was paused or starved, and
// the clients' silence meanwhile is not theirs.
constexpr std::chrono::milliseconds kLoopStall{1000};

void StoreServer::poll_once(int timeout_ms) {
  epoll_event events[256];
  const int timeout = next_timeout_ms(timeout_ms);
  const auto asleep = Clock::now();
  int n = epoll_wait(epoll_.get(), events, 256, timeout);
  if (Clock::now() - asleep > std::chrono::milliseconds(timeout) + kLoopStall) {
    resumed_ = Clock::now();
  }
  for (int i = 0; i < n; ++i) {
    std::uint64_t id = events[i].data.u64;
    if (id == kListenerKey) {
      accept_all();
      continue;
    }
    if (id == kWakeupKey) {
      std::uint64_t count;
      while (read(wakeup_.get(), &count, sizeof(count)) > 0) {
      }
      continue;
    }
    if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(id);
    if (events[i].events & EPOLLOUT) on_writable(id);
  }
  expire_deadlines();
  if (Clock::now() >= next_stall_check_) drop_stalled();
}

void StoreServer::run() {
  while (!stopping_.load(std::memory_order_acquire)) poll_once(-1);
}

void StoreServer::stop() {
  stopping_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wakeup_.get(), &one, sizeof(one));
}

void StoreServer::accept_all() {
  while (true) {
    int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or out of descriptors: the rest wait in the backlog
    if (connections_.size() >= options_.max_connections) {
      ::close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto c = std::make_unique<Connection>(options_.limits.max_frame);
    c->id = next_id_++;
    c->fd.reset(fd);
    c->last_progress = Clock::now();
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = c->id;
    epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event);
    connections_.emplace(c->id, std::move(c));
  }
}

void StoreServer::on_readable(std::uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  char buffer[64 * 1024];
  while (true) {
    ssize_t n = recv(c.fd.get(), buffer, sizeof(buffer), 0);
    if (n > 0) {
      c.decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
      c.last_progress = Clock::now();
      if (static_cast<std::size_t>(n) < sizeof(buffer)) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return close(id);  // end of stream or a socket error
  }
  process_frames(c);
}

void StoreServer::process_frames(Connection& c) {
  const std::uint64_t id = c.id;
  // A blocked client's further requests stay queued until its wait ends.
  while (!c.waiting && !c.close_after_send) {
    std::optional<std::string> body = c.decoder.next();
    if (c.decoder.error()) return reply_error(c, "frame length over the limit", true);
    if (!body) return;
    std::string why;
    std::optional<Request> request = parse_request(*body, options_.limits, why);
    if (!request) return reply_error(c, why, true);
    handle(c, *request);
    if (!connections_.count(id)) return;
  }
}

void StoreServer::handle(Connection& c, const Request& r) {
  if (!c.authenticated) {
    if (r.op != Opcode::hello || r.magic != kMagic)
      return reply_error(c, "not an aml store client", true);
    if (r.version != kVersion) {
      return reply_error(c,
                         "protocol version " + std::to_string(r.version) + ", server speaks " +
                             std::to_string(kVersion),
                         true);
    }
    if (!same_token(r.token, options_.token)) return reply_error(c, "wrong job token", true);
    c.authenticated = true;
    return reply(c, status_frame(Status::ok));
  }
  const std::string* key = r.keys.empty() ? nullptr : &r.keys.front();
  auto would_exceed = [&](const std::string& k) {
    return !data_.count(k) && data_.size() >= options_.limits.max_keys;
  };
  switch (r.op) {
    case Opcode::hello:
      return reply_error(c, "HELLO twice", true);
    case Opcode::set:
      if (would_exceed(*key))
        return reply_error(c, "the store holds its maximum number of keys", false);
      data_[*key] = r.value;
      reply(c, status_frame(Status::ok));
      return wake_waiters(*key);
    case Opcode::get:
    case Opcode::wait:
      if (all_present(r.keys)) {
        FrameWriter w;
        w.u8(static_cast<std::uint8_t>(Status::ok));
        if (r.op == Opcode::get) w.str(data_[*key]);
        return reply(c, w.finish());
      }
      if (r.timeout_ms == 0) return reply(c, status_frame(Status::timeout));
      return start_wait(c, r);
    case Opcode::get_all:
      if (all_present(r.keys) || r.timeout_ms == 0) {
        return reply(c, values_frame(all_present(r.keys) ? Status::ok : Status::timeout, r.keys));
      }
      return start_wait(c, r);
    case Opcode::add: {
      if (would_exceed(*key))
        return reply_error(c, "the store holds its maximum number of keys", false);
      std::int64_t current = 0;
      auto found = data_.find(*key);
      if (found != data_.end()) {
        const std::string& text = found->second;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), current);
        if (ec != std::errc() || end != text.data() + text.size()) {
          return reply_error(c, "add on a key whose value is not a number", false);
        }
      }
      std::int64_t next = static_cast<std::int64_t>(static_cast<std::uint64_t>(current) +
                                                    static_cast<std::uint64_t>(r.delta));
      data_[*key] = std::to_string(next);
      reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).i64(next).finish());
      return wake_waiters(*key);
    }
    case Opcode::check:
      return reply(
          c,
          FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).u8(all_present(r.keys)).finish());
    case Opcode::erase: {
      bool existed = data_.erase(*key) > 0;
      return reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).u8(existed).finish());
    }
    case Opcode::compare_set: {
      auto found = data_.find(*key);
      bool swap = found == data_.end() ? r.value.empty() : found->second == r.value;
      if (swap && would_exceed(*key))
        return reply_error(c, "the store holds its maximum number of keys", false);
      if (swap) data_[*key] = r.desired;
      const std::string& now = swap ? r.desired : (found == data_.end() ? r.value : found->second);
      reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).str(now).finish());
      if (swap) wake_waiters(*key);
      return;
    }
    case Opcode::last_will:
      c.last_will.emplace(*key, r.value);
      return reply(c, status_frame(Status::ok));
    case Opcode::clear_last_will:
      c.last_will.reset();
      return reply(c, status_frame(Status::ok));
    case Opcode::identify:
      c.watched_as = *key;
      return reply(c, status_frame(Status::ok));
    case Opcode::silent:
      return reply(c, silent_frame(std::chrono::milliseconds(r.timeout_ms)));
    case Opcode::heartbeat:
      return;  // its arrival was the point (last_progress)
  }
}

std::string StoreServer::values_frame(Status status, const std::vector<std::string>& keys) const {
  FrameWriter w;
  w.u8(static_cast<std::uint8_t>(status)).u32(static_cast<std::uint32_t>(keys.size()));
  for (const std::string& k : keys) {
    auto found = data_.find(k);
    w.u8(found != data_.end());
    w.str(found != data_.end() ? std::string_view(found->second) : std::string_view());
  }
  return w.finish();
}

std::string StoreServer::silent_frame(std::chrono::milliseconds at_least) const {
  // Bounded like a wait's keys: enough to name the first lost ones.
  const auto now = Clock::now();
  std::vector<const std::string*> names;
  for (const auto& [id, c] : connections_) {
    if (c->watched_as.empty()) continue;
    if (now - std::max(c->last_progress, resumed_) < at_least) continue;
    names.push_back(&c->watched_as);
    if (names.size() == options_.limits.max_wait_keys) break;
  }
  FrameWriter w;
  w.u8(static_cast<std::uint8_t>(Status::ok)).u32(static_cast<std::uint32_t>(names.size()));
  for (const std::string* name : names) w.str(*name);
  return w.finish();
}

bool StoreServer::all_present(const std::vector<std::string>& keys) const {
  for (const std::string& k : keys) {
    if (!data_.count(k)) return false;
  }
  return true;
}

void StoreServer::start_wait(Connection& c, const Request& r) {
  c.waiting = true;
  ++c.wait_seq;
  c.wait_op = r.op;
  c.wait_keys = r.keys;
  for (const std::string& k : r.keys) {
    if (!data_.count(k)) waiters_[k][c.id] = c.wait_seq;
  }
  if (r.timeout_ms != kForever) {
    c.deadline = deadlines_.emplace(Clock::now() + std::chrono::milliseconds(r.timeout_ms),
                                    std::make_pair(c.id, c.wait_seq));
  }
}

void StoreServer::forget_wait(Connection& c) {
  // A wait that ends leaves nothing behind: a client polling with short timeouts on a key
  // that never comes must not grow the registry or the deadline queue.
  for (const std::string& k : c.wait_keys) {
    auto it = waiters_.find(k);
    if (it == waiters_.end()) continue;
    auto entry = it->second.find(c.id);
    if (entry != it->second.end() && entry->second == c.wait_seq) it->second.erase(entry);
    if (it->second.empty()) waiters_.erase(it);
  }
  if (c.deadline) deadlines_.erase(*c.deadline);
  c.deadline.reset();
}

void StoreServer::finish_wait(Connection& c, Status status) {
  forget_wait(c);
  c.waiting = false;
  std::string frame;
  if (c.wait_op == Opcode::get_all) {
    frame = values_frame(status, c.wait_keys);
  } else {
    FrameWriter w;
    w.u8(static_cast<std::uint8_t>(status));
    if (status == Status::ok && c.wait_op == Opcode::get) w.str(data_[c.wait_keys.front()]);
    frame = w.finish();
  }
  c.wait_keys.clear();
  const std::uint64_t id = c.id;
  reply(c, std::move(frame));
  if (connections_.count(id)) process_frames(c);
}

void StoreServer::wake_waiters(const std::string& key) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  auto waiting = std::move(it->second);
  waiters_.erase(it);
  for (const auto& [id, seq] : waiting) {
    auto c = connections_.find(id);
    if (c == connections_.end() || !c->second->waiting || c->second->wait_seq != seq) continue;
    if (all_present(c->second->wait_keys)) finish_wait(*c->second, Status::ok);
  }
}

void StoreServer::expire_deadlines() {
  const auto now = Clock::now();
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    auto [id, seq] = deadlines_.begin()->second;
    auto c = connections_.find(id);
    if (c == connections_.end() || !c->second->waiting || c->second->wait_seq != seq) {
      deadlines_.erase(deadlines_.begin());
      continue;
    }
    finish_wait(*c->second, Status::timeout);  // erases its deadline entry
  }
}

void StoreServer::drop_stalled() {
  const auto now = Clock::now();
  next_stall_check_ =
      now + std::min<Clock::duration>(options_.stall_timeout, std::chrono::seconds(1));
  std::vector<std::uint64_t> stalled;
  for (const auto& [id, c] : connections_) {
    bool idle_too_long = now - c->last_progress >= options_.stall_timeout;
    if (idle_too_long && (c->decoder.mid_frame() || !c->authenticated)) stalled.push_back(id);
  }
  for (std::uint64_t id : stalled) close(id);
}

// Output buffer room a connection keeps between replies.
constexpr std::size_t kKeptOutput = 4096;

void StoreServer::reply(Connection& c, std::string frame) {
  if (c.out_offset == c.out.size()) {
    c.out.clear();
    c.out_offset = 0;
  }
  c.out.append(frame);
  if (c.out.size() - c.out_offset > options_.max_pending_output) return close(c.id);
  on_writable(c.id);
}

void StoreServer::reply_error(Connection& c, std::string_view message, bool then_close) {
  // With then_close the connection goes once the error is sent: `c` may be gone on return.
  if (then_close) c.close_after_send = true;
  reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::error)).str(message).finish());
}

void StoreServer::on_writable(std::uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
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
    epoll_event event{};
    event.events = EPOLLIN | (pending ? EPOLLOUT : 0u);
    event.data.u64 = id;
    epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, c.fd.get(), &event);
  }
}

void StoreServer::close(std::uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  if (it->second->waiting) forget_wait(*it->second);
  auto will = std::move(it->second->last_will);
  connections_.erase(it);
  // Gone first: waking the waiters may close other connections, never this one again.
  if (will && !data_.count(will->first) && data_.size() < options_.limits.max_keys) {
    data_[will->first] = will->second;
    wake_waiters(will->first);
  }
}

}  // namespace aml::store
