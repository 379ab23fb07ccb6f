#include "store/core/store_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "net/address_text.hpp"
#include "store/core/first_bytes.hpp"
#include "store/core/listen_socket.hpp"
#include "store/core/store_connection.hpp"

namespace aml::store {

namespace {

Error socket_error(const std::string& what, const std::string& where) {
  return invalid("store " + what, where, std::string("to work (") + std::strerror(errno) + ")");
}

// The server's epoll, with its wake-up eventfd (and the listener, where it has one) in it.
Result<std::pair<UniqueFd, UniqueFd>> open_loop(const UniqueFd& listener,
                                                const std::string& where) {
  UniqueFd epoll(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll) return socket_error("epoll", where);
  epoll_event event{};
  event.events = EPOLLIN;
  if (listener) {
    event.data.u64 = kListenerEvent;
    epoll_ctl(epoll.get(), EPOLL_CTL_ADD, listener.get(), &event);
  }
  UniqueFd wakeup(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wakeup) return socket_error("eventfd", where);
  event.data.u64 = kWakeupEvent;
  epoll_ctl(epoll.get(), EPOLL_CTL_ADD, wakeup.get(), &event);
  return std::pair{std::move(epoll), std::move(wakeup)};
}

}  // namespace

Result<std::unique_ptr<StoreServer>> StoreServer::listen(const std::string& bind_address, int port,
                                                         ServerOptions options) {
  auto listening = listen_tcp(bind_address, port, "store");
  if (!listening) return listening.error();
  UniqueFd listener = std::move(listening->fd);
  auto loop = open_loop(listener, bind_address + ":" + std::to_string(port));
  if (!loop) return loop.error();
  return std::unique_ptr<StoreServer>(new StoreServer(std::move(listener), std::move(loop->first),
                                                      std::move(loop->second), listening->port,
                                                      std::move(options)));
}

Result<std::unique_ptr<StoreServer>> StoreServer::behind_doorway(int port, ServerOptions options) {
  auto loop = open_loop(UniqueFd(), "port " + std::to_string(port));
  if (!loop) return loop.error();
  return std::unique_ptr<StoreServer>(new StoreServer(
      UniqueFd(), std::move(loop->first), std::move(loop->second), port, std::move(options)));
}

StoreServer::StoreServer(UniqueFd listener, UniqueFd epoll, UniqueFd wakeup, int port,
                         ServerOptions options)
    : listener_(std::move(listener)),
      epoll_(std::move(epoll)),
      wakeup_(std::move(wakeup)),
      port_(port),
      options_(std::move(options)),
      refusals_(options_.log),
      next_stall_check_(Clock::now() + std::min<Clock::duration>(options_.stall_timeout,
                                                                 options_.handshake_timeout)) {}

StoreServer::~StoreServer() = default;

std::size_t StoreServer::connection_memory() const {
  std::size_t bytes = 0;
  for (const auto& [id, c] : connections_) {
    bytes += sizeof(Connection) + c->out.capacity() + sizeof(std::pair<std::uint64_t, void*>) * 2;
  }
  return connections_.empty() ? 0 : bytes / connections_.size();
}

int StoreServer::next_timeout_ms(int requested) const {
  auto until = [](Clock::time_point when) {
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(when - Clock::now()).count() + 1;
    return static_cast<int>(std::max<long long>(0, std::min<long long>(ms, 1 << 30)));
  };
  int timeout = until(next_stall_check_);
  if (!deadlines_.empty()) timeout = std::min(timeout, until(deadlines_.begin()->first));
  if (!prefix_only_.empty()) timeout = std::min(timeout, static_cast<int>(kPrefixWait.count()));
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
  handle_events(events, n);
  if (!prefix_only_.empty()) choose_late();
  expire_deadlines();
  flush_trunks();
  if (Clock::now() >= next_stall_check_) drop_stalled();
}

// The job's members first: a flood of strangers (new connections, junk, handshakes) waits
// behind them, never the other way round.
void StoreServer::handle_events(const epoll_event* events, int n) {
  auto is_member = [&](std::uint64_t id) {
    auto it = connections_.find(id);
    return it != connections_.end() && it->second->authenticated;
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
      if (events[i].events & EPOLLOUT) on_writable(id);
    }
  }
  if (accept_now) accept_all();
}

void StoreServer::run() {
  while (!stopping_.load(std::memory_order_acquire)) poll_once(-1);
}

void StoreServer::stop() {
  stopping_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wakeup_.get(), &one, sizeof(one));
}

void StoreServer::on_readable(std::uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  char buffer[64 * 1024];
  while (true) {
    ssize_t n = recv(c.fd.get(), buffer, sizeof(buffer), 0);
    if (n > 0) {
      c.last_progress = Clock::now();
      if (c.torch) {
        c.in.append(buffer, static_cast<std::size_t>(n));
        if (c.trunk) {
          process_trunk(c);  // a trunk's streams are bounded each, not the trunk
          if (!connections_.count(id)) return;
        } else if (c.in.size() - c.in_used > options_.torch_limits.max_request + sizeof(buffer)) {
          return close(id);  // more than one request's bounds before a whole one
        }
        if (static_cast<std::size_t>(n) < sizeof(buffer)) break;
        continue;
      }
      if (c.undecided) {
        c.in.append(buffer, static_cast<std::size_t>(n));
        choose_door(c, false);
        if (!connections_.count(id)) return;  // gone through torch's door
      } else {
        c.decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
      }
      // Before it has proven itself a connection gets a handshake's worth of memory.
      if (!c.authenticated && c.decoder.buffered() > 2 * options_.max_unproven_frame) {
        return refuse(c, "sent more than a handshake before proving itself");
      }
      if (static_cast<std::size_t>(n) < sizeof(buffer)) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (c.torch) {
      // What it sent before it left is done (a SET and then exit is a common goodbye).
      process_torch(c);
      if (!connections_.count(id)) return;
    }
    if (c.proving) {
      // It left at this store's proof: it checked it and found it wrong.
      refusals_.refused(c.peer, "it left at this store's proof (another job secret?)",
                        Clock::now());
    }
    return close(id);  // end of stream or a socket error
  }
  process_frames(c);
}

void StoreServer::process_frames(Connection& c) {
  if (c.torch) return process_torch(c);
  const std::uint64_t id = c.id;
  // A blocked client's further requests stay queued until its wait ends.
  while (!c.waiting && !c.close_after_send) {
    std::optional<std::string> body = c.decoder.next();
    if (c.decoder.error()) {
      if (!c.authenticated)
        return refuse(c, "not an aml store client (a frame length over the limit)");
      return reply_error(c, "frame length over the limit", true);
    }
    if (!body) return;
    std::string why;
    std::optional<Request> request = parse_request(*body, options_.limits, why);
    if (!request && !c.authenticated) return refuse(c, "not an aml store client (" + why + ")");
    if (!request) return reply_error(c, why, true);
    if (!c.authenticated) {
      admit(c, *request);
    } else {
      handle(c, *request);
    }
    if (!connections_.count(id)) return;
  }
}

void StoreServer::drop_stalled() {
  const auto now = Clock::now();
  next_stall_check_ =
      now + std::min<Clock::duration>(
                {options_.stall_timeout, options_.handshake_timeout, std::chrono::seconds(1)});
  if (listener_paused_) {
    listener_paused_ = false;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = kListenerEvent;
    epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, listener_.get(), &event);
  }
  // Unproven connections are dropped by age, however they trickle bytes; members only where
  // they stall in the middle of a frame.
  std::vector<std::uint64_t> late;
  for (std::uint64_t id : unproven_) {
    if (now - connections_.at(id)->accepted_at < options_.handshake_timeout) break;
    late.push_back(id);
  }
  const std::string deadline = std::to_string(options_.handshake_timeout.count()) + " ms";
  for (std::uint64_t id : late) {
    Connection& c = *connections_.at(id);
    // Silent so long with torch's door behind: a torch client that connected and has not asked
    // anything yet (torch's TCPStore says nothing until it is used). torch's door takes it if
    // it comes from one of the job's hosts.
    if (c.undecided) {
      choose_door(c, true);
    } else {
      refuse(c, "no handshake within " + deadline);
    }
  }
  std::vector<std::uint64_t> stalled;
  for (const auto& [id, c] : connections_) {
    const bool mid_request = c->torch ? c->in.size() > c->in_used : c->decoder.mid_frame();
    if (c->authenticated && mid_request && now - c->last_progress >= options_.stall_timeout)
      stalled.push_back(id);
  }
  for (std::uint64_t id : stalled) close(id);
  refusals_.flush(now);
}

// Output buffer room a connection keeps between replies.
constexpr std::size_t kKeptOutput = 4096;

void StoreServer::reply(Connection& c, std::string frame) {
  if (c.trunk_id != 0) return reply_on_trunk(c, frame);
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
  if (!it->second->watching.empty()) forget_watches(*it->second);
  auto will = std::move(it->second->last_will);
  const std::uint64_t trunk_id = it->second->trunk_id;
  const std::uint32_t stream = it->second->stream;
  std::vector<std::uint64_t> riders;  // a trunk's streams go with it
  for (const auto& [number, rider] : it->second->streams) riders.push_back(rider);
  prefix_only_.erase(id);
  unproven_.erase(id);
  connections_.erase(it);
  if (trunk_id != 0) stream_closed(trunk_id, stream);
  for (std::uint64_t rider : riders) close(rider);
  // Gone first: waking the waiters may close other connections, never this one again.
  if (will && !data_.count(will->first) && data_.size() < options_.limits.max_keys) {
    data_[will->first] = will->second;
    wake_waiters(will->first);
  }
}

}  // namespace aml::store
