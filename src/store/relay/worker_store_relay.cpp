#include "store/relay/worker_store_relay.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "store/core/dial.hpp"
#include "store/core/listen_socket.hpp"
#include "store/relay/relay_wire.hpp"

namespace aml::store {
namespace {

constexpr std::uint64_t kListenerKey = 0;  // streams are numbered from 1
constexpr std::uint64_t kWakeupKey = ~0ull;
constexpr std::uint64_t kTrunkKey = ~0ull - 1;
constexpr std::size_t kReadSize = 64 * 1024;

Error relay_error(const std::string& what, const std::string& where) {
  return invalid("workers' store relay " + what, where,
                 std::string("to work (") + std::strerror(errno) + ")");
}

// The trunk, once node 0's store has taken it: it answers the hello with its own. A connection
// closed before that answer was not admitted yet (node 0 learns a round's members' addresses a
// moment after it says the round's verdict, which this node may read first): dialled again
// until the deadline (node 0's name resolved once).
Result<UniqueFd> open_trunk(const std::string& host, int port, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string where = host + ":" + std::to_string(port);
  auto addresses = resolve_store(host, port);
  if (!addresses) return addresses.error();
  const std::string hello = relay::hello();
  while (true) {
    auto dialed = dial(*addresses, where, deadline);
    if (!dialed) return dialed.error();
    UniqueFd trunk(*dialed);
    std::string answer;
    if (send(trunk.get(), hello.data(), hello.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(hello.size())) {
      while (answer.size() < relay::kHelloSize) {
        pollfd ready{trunk.get(), POLLIN, 0};
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (wait.count() <= 0 || poll(&ready, 1, static_cast<int>(wait.count())) <= 0) break;
        char buffer[relay::kHelloSize];
        const ssize_t n = recv(trunk.get(), buffer, relay::kHelloSize - answer.size(), 0);
        if (n <= 0) break;
        answer.append(buffer, static_cast<std::size_t>(n));
      }
    }
    if (answer.size() == relay::kHelloSize) {
      relay::Decoded d = relay::decode_hello(answer);
      if (d.outcome != relay::Outcome::frame) {
        return invalid("node 0's workers' store", where, d.why);
      }
      return trunk;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return invalid("node 0's workers' store", where,
                     "to admit this node's relay (it closed the connection: is this host one of "
                     "the job's?)");
    }
    usleep(50000);
  }
}

}  // namespace

Result<std::unique_ptr<WorkerStoreRelay>> WorkerStoreRelay::open(const std::string& store_host,
                                                                 int store_port,
                                                                 const std::string& listen_address,
                                                                 int port, RelayOptions options) {
  auto opened = open_trunk(store_host, store_port, options.connect_timeout);
  if (!opened) {
    Error error = opened.error();
    error.expected += "; this node's launcher carries its workers' store calls to node 0's";
    return error;
  }
  UniqueFd trunk = std::move(*opened);
  fcntl(trunk.get(), F_SETFL, fcntl(trunk.get(), F_GETFL) | O_NONBLOCK);
  auto listening = listen_tcp(listen_address, port, "workers' store relay");
  if (!listening) return listening.error();
  const std::string where = listen_address + ":" + std::to_string(listening->port);
  UniqueFd epoll(epoll_create1(EPOLL_CLOEXEC));
  UniqueFd wakeup(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!epoll || !wakeup) return relay_error("epoll", where);
  return std::unique_ptr<WorkerStoreRelay>(
      new WorkerStoreRelay(std::move(listening->fd), std::move(epoll), std::move(wakeup),
                           std::move(trunk), listening->port, options));
}

WorkerStoreRelay::WorkerStoreRelay(UniqueFd listener, UniqueFd epoll, UniqueFd wakeup,
                                   UniqueFd trunk, int port, RelayOptions options)
    : listener_(std::move(listener)),
      epoll_(std::move(epoll)),
      wakeup_(std::move(wakeup)),
      trunk_(std::move(trunk)),
      port_(port),
      options_(options) {
  watch(listener_.get(), kListenerKey, EPOLLIN, true);
  watch(wakeup_.get(), kWakeupKey, EPOLLIN, true);
  watch(trunk_.get(), kTrunkKey, EPOLLIN, true);
  flush_trunk();
}

WorkerStoreRelay::~WorkerStoreRelay() = default;

void WorkerStoreRelay::watch(int fd, std::uint64_t key, std::uint32_t events, bool added) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = key;
  epoll_ctl(epoll_.get(), added ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event);
}

void WorkerStoreRelay::run() {
  while (!stopping_.load(std::memory_order_acquire)) poll_once(-1);
}

void WorkerStoreRelay::stop() {
  stopping_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wakeup_.get(), &one, sizeof(one));
}

void WorkerStoreRelay::poll_once(int timeout_ms) {
  epoll_event events[256];
  const int n = epoll_wait(epoll_.get(), events, 256, timeout_ms);
  for (int i = 0; i < n; ++i) {
    const std::uint64_t key = events[i].data.u64;
    const std::uint32_t what = events[i].events;
    if (key == kListenerKey) {
      accept_all();
    } else if (key == kWakeupKey) {
      std::uint64_t count;
      while (read(wakeup_.get(), &count, sizeof(count)) > 0) {
      }
    } else if (key == kTrunkKey) {
      if (what & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_trunk_readable();
      if ((what & EPOLLOUT) && !trunk_lost_) flush_trunk();
    } else {
      const auto stream = static_cast<std::uint32_t>(key);
      if (what & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_local_readable(stream);
      if (what & EPOLLOUT) on_local_writable(stream);
    }
  }
  // Every worker's bytes of this turn in one send.
  flush_trunk();
}

void WorkerStoreRelay::accept_all() {
  while (listener_) {
    int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or out of descriptors: the rest wait in the backlog
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const std::uint32_t stream = next_stream_++;
    relay::put_open(trunk_out_, stream);
    Local& local = locals_[stream];
    local.fd.reset(fd);
    const bool full = trunk_out_.size() - trunk_out_offset_ > options_.trunk_backlog;
    local.paused = full;
    if (full) paused_.push_back(stream);
    watch(fd, stream, full ? 0u : EPOLLIN, true);
  }
}

void WorkerStoreRelay::on_local_readable(std::uint32_t stream) {
  auto it = locals_.find(stream);
  if (it == locals_.end() || it->second.paused) return;
  Local& local = it->second;
  char buffer[kReadSize];
  while (true) {
    ssize_t n = recv(local.fd.get(), buffer, sizeof(buffer), 0);
    if (n > 0) {
      relay::put_data(trunk_out_, stream, std::string_view(buffer, static_cast<std::size_t>(n)));
      if (trunk_out_.size() - trunk_out_offset_ > options_.trunk_backlog) {
        // Node 0 takes less than this node's workers send: they wait, unread, in their sockets.
        local.paused = true;
        paused_.push_back(stream);
        watch(local.fd.get(), stream, local.want_write ? EPOLLOUT : 0u, false);
        return;
      }
      if (static_cast<std::size_t>(n) < sizeof(buffer)) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    return drop_local(stream, true);  // the worker closed it, or its socket failed
  }
}

void WorkerStoreRelay::on_local_writable(std::uint32_t stream) {
  auto it = locals_.find(stream);
  if (it == locals_.end()) return;
  Local& local = it->second;
  while (local.out_offset < local.out.size()) {
    ssize_t n = send(local.fd.get(), local.out.data() + local.out_offset,
                     local.out.size() - local.out_offset, MSG_NOSIGNAL);
    if (n > 0) {
      local.out_offset += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return drop_local(stream, true);
  }
  const bool pending = local.out_offset < local.out.size();
  if (!pending) {
    if (local.close_after_send) return drop_local(stream, false);
    local.out.clear();
    local.out_offset = 0;
    if (local.out.capacity() > 64 * 1024) std::string().swap(local.out);
  }
  if (pending != local.want_write) {
    local.want_write = pending;
    watch(local.fd.get(), stream, (local.paused ? 0u : EPOLLIN) | (pending ? EPOLLOUT : 0u), false);
  }
}

void WorkerStoreRelay::drop_local(std::uint32_t stream, bool tell_node0) {
  if (locals_.erase(stream) == 0) return;  // its descriptor closes, and leaves the epoll set
  if (tell_node0 && !trunk_lost_) relay::put_close(trunk_out_, stream);
}

void WorkerStoreRelay::on_trunk_readable() {
  char buffer[kReadSize];
  while (!trunk_lost_) {
    ssize_t n = recv(trunk_.get(), buffer, sizeof(buffer), 0);
    if (n > 0) {
      trunk_in_.append(buffer, static_cast<std::size_t>(n));
      if (static_cast<std::size_t>(n) < sizeof(buffer)) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return lose_trunk();
  }
  std::size_t used = 0;
  while (used < trunk_in_.size()) {
    relay::Decoded d = relay::decode(std::string_view(trunk_in_).substr(used));
    if (d.outcome == relay::Outcome::need_more) break;
    if (d.outcome == relay::Outcome::bad) return lose_trunk();
    used += d.used;
    auto it = locals_.find(d.stream);
    if (it == locals_.end()) continue;  // a worker that left a moment ago
    Local& local = it->second;
    if (d.kind == relay::Kind::close) {
      local.close_after_send = true;
      on_local_writable(d.stream);
      continue;
    }
    if (local.out.size() - local.out_offset + d.data.size() > options_.max_pending_output) {
      drop_local(d.stream, true);  // it does not read its replies: it goes, not its neighbours
      continue;
    }
    local.out.append(d.data);
    on_local_writable(d.stream);
  }
  trunk_in_.erase(0, used);
}

void WorkerStoreRelay::flush_trunk() {
  if (trunk_lost_) return;
  while (trunk_out_offset_ < trunk_out_.size()) {
    ssize_t n = send(trunk_.get(), trunk_out_.data() + trunk_out_offset_,
                     trunk_out_.size() - trunk_out_offset_, MSG_NOSIGNAL);
    if (n > 0) {
      trunk_out_offset_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return lose_trunk();
  }
  const bool pending = trunk_out_offset_ < trunk_out_.size();
  if (!pending) {
    trunk_out_.clear();
    trunk_out_offset_ = 0;
    if (trunk_out_.capacity() > 1024 * 1024) std::string().swap(trunk_out_);
  }
  if (pending != trunk_want_write_) {
    trunk_want_write_ = pending;
    watch(trunk_.get(), kTrunkKey, EPOLLIN | (pending ? EPOLLOUT : 0u), false);
  }
  if (paused_.empty() || trunk_out_.size() - trunk_out_offset_ > options_.trunk_backlog / 2) {
    return;
  }
  std::vector<std::uint32_t> resumed;
  resumed.swap(paused_);
  for (std::uint32_t stream : resumed) {
    auto it = locals_.find(stream);
    if (it == locals_.end()) continue;
    it->second.paused = false;
    watch(it->second.fd.get(), stream, EPOLLIN | (it->second.want_write ? EPOLLOUT : 0u), false);
  }
}

// Node 0's store is gone (its launcher ended, or the network between): every worker's
// connection closes with it, as it would have with the store itself, and no new one is taken.
void WorkerStoreRelay::lose_trunk() {
  trunk_lost_ = true;
  trunk_.reset();
  listener_.reset();
  locals_.clear();
  paused_.clear();
  trunk_out_.clear();
  trunk_out_offset_ = 0;
}

}  // namespace aml::store
