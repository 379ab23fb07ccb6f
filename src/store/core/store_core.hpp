// The store server's core (DESIGN §5): a TCP key-value store, single-threaded and event driven.
// It owns the sockets, the keys and the blocked waits; its door (store_door.hpp) speaks the
// clients' protocol over it. A client blocked in a wait costs nothing while it waits: it sits
// in a waiter registry that a new key wakes, and in a deadline queue for its timeout.
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/core/refusal_log.hpp"
#include "store/core/server_options.hpp"
#include "store/core/store_connection.hpp"
#include "store/core/store_door.hpp"
#include "util/unique_fd.hpp"

namespace aml::store {

// The most a connection's socket gives in one read: a door's bound on what a client may send
// ahead of a whole request allows one read more.
inline constexpr std::size_t kReadBytes = 64 * 1024;

class StoreCore {
 public:
  using Clock = StoreClock;
  // Serves `listener`'s connections (none: only those handed over by adopt()) through the
  // door that set_door gives it, before its first turn.
  StoreCore(UniqueFd listener, UniqueFd epoll, UniqueFd wakeup, int port, ServerOptions options);
  ~StoreCore();
  void set_door(std::unique_ptr<StoreDoor> door) { door_ = std::move(door); }

  // The loop (store_core.cpp).
  int port() const { return port_; }
  int epoll_fd() const { return epoll_.get(); }
  void poll_once(int timeout_ms);
  void run();
  void stop();
  void adopt(UniqueFd fd, std::string peer, std::string first_bytes);

  // For the doors: their connections.
  const ServerOptions& options() const { return options_; }
  Connection* find(std::uint64_t id);
  bool exists(std::uint64_t id) const { return connections_.count(id) > 0; }
  const std::unordered_map<std::uint64_t, std::unique_ptr<Connection>>& connections() const {
    return connections_;
  }
  // A connection without a socket, carried by another (a relay's stream).
  Connection& add_carried(std::string peer);
  void reply(Connection& c, std::string_view frame);
  void send_now(std::uint64_t id);  // what c's output holds goes out (or waits for EPOLLOUT)
  void close(std::uint64_t id);
  // The connection leaves this server with its socket and none of its state (to another door).
  UniqueFd release(Connection& c);
  void refused(const std::string& peer, const std::string& why);
  // Reads what c's socket holds now; true where it held bytes (c may be gone after). A loop
  // behind (thousands of connections ready at once, a starved process) must not call a client
  // silent whose bytes wait unread.
  bool catch_up(Connection& c);
  // When the loop last came back from a stall of its own (its clients' silence is not theirs).
  Clock::time_point resumed() const { return resumed_; }

  // For the doors: the keys and waits (store_core_waits.cpp).
  std::unordered_map<std::string, std::string>& data() { return data_; }
  const std::unordered_map<std::string, std::string>& data() const { return data_; }
  // torch's queues: a waiter sees a non-empty one as a key that is there.
  std::unordered_map<std::string, std::deque<std::string>>& queues() { return queues_; }
  bool full_for(const std::string& key) const {
    return !data_.count(key) && data_.size() >= options_.limits.max_keys;
  }
  bool all_present(const std::vector<std::string>& keys) const;
  // c waits for every key (timeout_ms 0xffffffff: no deadline); its door's wait_reply answers.
  void start_wait(Connection& c, const std::vector<std::string>& keys, std::uint32_t timeout_ms);
  void cancel_wait(Connection& c);  // without a reply
  // Every waiter on key whose keys are all there now; or the first (a queue's one new entry).
  void wake_waiters(const std::string& key, bool just_one = false);

  // Reports.
  std::size_t connection_count() const { return connections_.size(); }
  std::size_t key_count() const { return data_.size(); }
  std::size_t pending_wait_entries() const;
  std::size_t connection_memory() const;
  std::size_t unproven_count() const { return door_->unproven_count(); }
  std::size_t refusals() const { return refusals_.refusals(); }

 private:
  void accept_all();
  Connection& add_connection(UniqueFd fd, std::string peer);
  void take_adopted();
  void handle_events(const ::epoll_event* events, int n);
  void on_readable(std::uint64_t id);
  void check(Clock::time_point now);
  void finish_wait(Connection& c, bool timed_out);
  bool present(const std::string& key) const;
  void register_missing(Connection& c);
  void forget_wait(Connection& c);
  void expire_deadlines();
  int next_timeout_ms(int requested) const;

  UniqueFd listener_;
  UniqueFd epoll_;
  UniqueFd wakeup_;  // an eventfd: stop() and adopt() from another thread wake the loop
  std::atomic<bool> stopping_{false};
  int port_;
  ServerOptions options_;
  std::unique_ptr<StoreDoor> door_;
  std::unordered_map<std::string, std::string> data_;
  std::unordered_map<std::string, std::deque<std::string>> queues_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  struct Adopted {
    UniqueFd fd;
    std::string peer;
    std::string bytes;
  };
  std::mutex adopted_mutex_;
  std::vector<Adopted> adopted_;
  RefusalLog refusals_;
  bool listener_paused_ = false;  // out of descriptors with nothing to evict: resumed at check
  Clock::time_point next_stall_scan_{};
  // key -> connections waiting for it, each with the sequence number of that wait (so that a
  // finished wait's stale entry is recognised). By connection, so that ending one wait costs
  // the same whether 10 or 4,096 clients wait on that key (every node watches the abort key,
  // and renews that wait every few seconds).
  std::unordered_map<std::string, std::unordered_map<std::uint64_t, std::uint64_t>> waiters_;
  Deadlines deadlines_;
  std::uint64_t next_id_ = 1;
  Clock::time_point next_check_;
  Clock::time_point resumed_{};
};

}  // namespace aml::store
