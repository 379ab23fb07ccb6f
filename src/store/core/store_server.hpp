// The rendezvous store server (DESIGN §5): a TCP key-value store, single-threaded and event
// driven. A client blocked in get or wait costs nothing while it waits: it sits in a waiter
// registry that set and add wake, and in a deadline queue for its timeout. One key-value core
// and one waiter registry behind either of two doors: the launchers' own protocol with its
// handshake (wire.hpp), or torch's TCPStore protocol for the workers (torch_wire.hpp, DESIGN §3),
// from each worker itself or carried by its node's relay (relay_wire.hpp).
#pragma once

#include <sys/epoll.h>

#include <aml/error.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/core/refusal_log.hpp"
#include "store/launchers/handshake.hpp"
#include "store/launchers/wire.hpp"
#include "store/torch/admitted_hosts.hpp"
#include "store/torch/torch_doorway.hpp"
#include "store/torch/torch_wire.hpp"
#include "util/unique_fd.hpp"

namespace aml::store {

// How clients prove they belong to the job (store/launchers/handshake.hpp).
struct ServerAuth {
  AuthKind kind = AuthKind::none;
  std::string launcher_key;  // kind key: role_key(secret, job, launcher)
  std::string worker_key;    // kind key: role_key(secret, job, worker)
};

// Which protocol a server's clients speak.
enum class Door : std::uint8_t {
  aml,    // the launchers' own (wire.hpp): every client proves itself in a handshake
  torch,  // torch's TCPStore (torch_wire.hpp): the workers' own store calls, by address
};

struct ServerOptions {
  Door door = Door::aml;
  // torch's door: the job's hosts; a connection from anywhere else is closed at accept.
  std::shared_ptr<const AdmittedHosts> admitted;
  // aml's door: where each proven launcher's address goes (the workers' door admits it).
  std::shared_ptr<AdmittedHosts> vouched;
  // aml's door: the connections at its socket that speak torch go through it to the round's
  // workers' store (torch_doorway.hpp); none: its socket is the launchers' alone.
  std::shared_ptr<TorchDoorway> torch_doorway;
  torch::Limits torch_limits;
  std::string token;  // every client must present it in HELLO: the job's public id
  ServerAuth auth;
  Limits limits;
  std::chrono::milliseconds stall_timeout{10000};  // a member mid-frame this long: dropped
  // A connection that has not proven itself (DESIGN §5): this long from its accept at most,
  // this many bytes in its frames, this many of them at once (the oldest goes for a new one).
  std::chrono::milliseconds handshake_timeout{5000};
  std::uint32_t max_unproven_frame = 4096;
  std::size_t max_unproven = 8192;
  std::size_t max_connections = 1 << 17;
  std::size_t max_pending_output = 16u << 20;  // a client that does not read its replies is dropped
  RefusalLog::Sink log;  // refusals, each address once (store/core/refusal_log.hpp)
};

class StoreServer {
 public:
  // Listens on bind_address:port (port 0: the kernel picks one; see port()).
  static Result<std::unique_ptr<StoreServer>> listen(const std::string& bind_address, int port,
                                                     ServerOptions options);
  // torch's door behind another server's socket (torch_doorway.hpp): it listens on nothing
  // and serves the connections handed to it; `port` is that socket's, for reports.
  static Result<std::unique_ptr<StoreServer>> behind_doorway(int port, ServerOptions options);
  ~StoreServer();

  // A connection accepted and read by another server's thread, served here from now on;
  // safe to call from any thread.
  void adopt(UniqueFd fd, std::string peer, std::string first_bytes);

  int port() const { return port_; }
  // Readable when the server has work: a host's own event loop can watch it.
  int epoll_fd() const { return epoll_.get(); }
  // Handles what is ready, waiting at most timeout_ms (-1: until something happens).
  void poll_once(int timeout_ms);
  // Serves until stop() is called; for a thread of its own.
  void run();
  // Makes run() return soon; safe to call from any thread.
  void stop();

  std::size_t connection_count() const { return connections_.size(); }
  std::size_t key_count() const { return data_.size(); }
  // Entries of blocked gets and waits (registry and deadline queue), for tests.
  std::size_t pending_wait_entries() const;
  // Bytes the server holds per connection right now (buffers and bookkeeping), for reports.
  std::size_t connection_memory() const;
  std::size_t unproven_count() const { return unproven_.size(); }
  std::size_t refusals() const { return refusals_.refusals(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection;

  StoreServer(UniqueFd listener, UniqueFd epoll, UniqueFd wakeup, int port, ServerOptions options);
  // store_server_arrivals.cpp: accepted here or handed over, and the door a connection chose.
  void accept_all();
  Connection& add_connection(UniqueFd fd, std::string peer);
  // A connection's first bytes choose its door (first_bytes.hpp): the launchers' stays, torch's
  // goes through the doorway. `late`: no more bytes came in time, so a prefix is torch's.
  void choose_door(Connection& c, bool late);
  void hand_to_torch(Connection& c);
  void choose_late();   // connections that sent a prefix of a HELLO and no more for a while
  void take_adopted();  // the connections adopt() queued
  void handle_events(const ::epoll_event* events, int n);
  void on_readable(std::uint64_t id);
  void on_writable(std::uint64_t id);
  void process_frames(Connection& c);
  void handle(Connection& c, const Request& r);
  // store_server_admission.cpp: HELLO and PROVE, what a proven worker may not do, refusals.
  void admit(Connection& c, const Request& r);
  void hello(Connection& c, const Request& r);
  void prove(Connection& c, const Request& r);
  void proven(Connection& c);
  std::optional<std::string> server_proof(Connection& c);  // nullopt: refused
  bool worker_may(const Connection& c, const Request& r, std::string& why) const;
  void refuse(Connection& c, const std::string& why);
  void evict_oldest_unproven(const std::string& why);
  bool all_present(const std::vector<std::string>& keys) const;
  // store_server_torch.cpp: torch's door.
  void process_torch(Connection& c);
  void handle_torch(Connection& c, const torch::Request& r);
  bool torch_set(Connection& c, const std::string& key, std::string value);
  void notify_watchers(const std::string& key, torch::WatchReply change, std::string_view old,
                       std::string_view now);
  void forget_watches(Connection& c);
  void compact_input(Connection& c);
  // store_server_relay.cpp: a node's relay, its streams served as connections of their own.
  bool speaks_relay(const Connection& c) const;
  void process_trunk(Connection& c);
  void stream_data(Connection& trunk, std::uint32_t stream, std::string_view data);
  void stream_ended(Connection& trunk, std::uint32_t stream);
  void stream_closed(std::uint64_t trunk_id, std::uint32_t stream);
  void reply_on_trunk(Connection& s, std::string_view frame);
  void queue_flush(Connection& trunk);
  void flush_trunks();
  void start_wait(Connection& c, Opcode op, const std::vector<std::string>& keys,
                  std::uint32_t timeout_ms);
  void finish_wait(Connection& c, Status status);
  void forget_wait(Connection& c);
  // Every waiter on key whose keys are all there now; or the first (a queue's one new entry).
  void wake_waiters(const std::string& key, bool just_one = false);
  void expire_deadlines();
  void drop_stalled();
  std::string values_frame(Status status, const std::vector<std::string>& keys) const;
  std::string silent_frame(std::chrono::milliseconds at_least) const;
  void reply(Connection& c, std::string frame);
  void reply_error(Connection& c, std::string_view message, bool then_close);
  void close(std::uint64_t id);
  int next_timeout_ms(int requested) const;

  UniqueFd listener_;
  UniqueFd epoll_;
  UniqueFd wakeup_;  // an eventfd: stop() from another thread wakes the loop
  std::atomic<bool> stopping_{false};
  int port_;
  ServerOptions options_;
  std::unordered_map<std::string, std::string> data_;
  // torch's door alone: its queues (a waiter sees a non-empty one as there) and <= 2.0's
  // watches (key -> connections told of its changes).
  std::unordered_map<std::string, std::deque<std::string>> queues_;
  std::unordered_map<std::string, std::set<std::uint64_t>> watchers_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::set<std::uint64_t> unproven_;  // by id, so by age: the oldest is the first
  std::vector<std::uint64_t> trunks_to_flush_;
  // Connections whose door is not chosen yet that sent a few bytes (choose_late).
  std::set<std::uint64_t> prefix_only_;
  struct Adopted {
    UniqueFd fd;
    std::string peer;
    std::string bytes;
  };
  std::mutex adopted_mutex_;
  std::vector<Adopted> adopted_;
  RefusalLog refusals_;
  bool listener_paused_ =
      false;  // out of descriptors with nothing to evict: resumed by the next check
  // key -> connections waiting for it, each with the sequence number of that wait (so that a
  // finished wait's stale entry is recognised). By connection, so that ending one wait costs
  // the same whether 10 or 4,096 clients wait on that key (every node watches the abort key,
  // and renews that wait every few seconds).
  std::unordered_map<std::string, std::unordered_map<std::uint64_t, std::uint64_t>> waiters_;
  std::multimap<Clock::time_point, std::pair<std::uint64_t, std::uint64_t>> deadlines_;
  std::uint64_t next_id_ = 1;
  Clock::time_point next_stall_check_;
  Clock::time_point resumed_{};  // the loop's last return from a stall of its own
};

}  // namespace aml::store
