// The rendezvous in etcd (DESIGN §5, "Rendezvous backends"), its calls through etcd's gRPC API
// or its v3 JSON gateway (etcd_session.hpp), its watches through the gateway: no launcher
// serves it, so any node may be lost. Keys live under a prefix per job; sets are
// puts, compare_set and claim are transactions (claim's key carries this launcher's lease), a
// count is a key's version (each put of it one more, one round trip, no retries), and every
// wait is a watch. A launcher's last will is a key under its lease: when the lease ends, every
// other launcher sees the deletion and sets what it says.
#pragma once

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "etcd/etcd_session.hpp"
#include "rendezvous/rendezvous_client.hpp"

namespace aml::etcd {

class EtcdRendezvous : public RendezvousClient {
 public:
  explicit EtcdRendezvous(std::shared_ptr<EtcdSession> session);

  Result<bool> set(std::string_view key, std::string_view value) override;
  // One transaction with no condition: its operations in its success branch.
  Result<std::vector<std::optional<std::string>>> batch(const std::vector<BatchOp>& ops) override;
  std::optional<long> own_number() const override { return std::atol(session_->lease().c_str()); }
  bool lease_ended() const override { return session_->lease_ended(); }
  bool ask_lease_ended() override { return session_->ask_lease_ended(); }
  int generation() const override { return session_->generation(); }
  // Transactions of up to 128 puts (etcd's default --max-txn-ops).
  Result<bool> set_many(const std::vector<std::pair<std::string, std::string>>& pairs) override;
  Result<std::optional<std::string>> get(std::string_view key,
                                         std::chrono::milliseconds timeout) override;
  Result<std::int64_t> add(std::string_view key, std::int64_t delta) override;
  // One watch on the count for every call with the same count_key: a coordinator that waits
  // for a thousand launchers does not open a thousand watches.
  Result<std::int64_t> wait_count(std::string_view count_key, std::int64_t above,
                                  std::string_view next_key,
                                  std::chrono::milliseconds timeout) override;
  // From the count's history, read through wait_count's watch (started from the count's
  // creation): each put of the count carries what its counter brought.
  Result<std::vector<std::optional<std::string>>> arrivals(
      std::string_view count_key, std::int64_t from, std::int64_t to,
      std::chrono::milliseconds timeout) override;
  Result<bool> check(const std::vector<std::string>& keys) override;
  Result<bool> wait(const std::vector<std::string>& keys,
                    std::chrono::milliseconds timeout) override;
  Result<std::vector<std::optional<std::string>>> get_all(
      const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  Result<bool> erase(std::string_view key) override;
  Result<std::string> compare_set(std::string_view key, std::string_view expected,
                                  std::string_view desired) override;
  Result<std::string> claim(std::string_view key, std::string_view value) override;
  Result<bool> set_last_will(std::string_view key, std::string_view value) override;
  Result<bool> clear_last_will() override;
  Result<bool> clear_lasting_will() override;
  Result<bool> identify(std::string_view) override { return true; }
  Result<std::vector<std::string>> silent(std::chrono::milliseconds) override;
  Result<bool> heartbeat() override;
  Result<bool> watch_wills(bool on) override { return session_->watch_wills(on, reply_deadline()); }
  Result<std::vector<long>> lapsed(const std::vector<long>& launchers) override {
    return session_->lapsed(launchers, reply_deadline());
  }
  Result<bool> start_get(std::string_view key, std::chrono::milliseconds timeout) override;
  Result<std::optional<std::string>> finish_get() override;
  bool follow_beside(std::string_view beside) override;
  // The same descriptor for the connection's life, whichever member the watch is on now (an
  // event loop registers it once): an epoll set holding the watch's socket (and an eventfd
  // for a value that came while get() waited for the key beside).
  int fd() const override { return ready_fd_.get(); }
  void set_reply_timeout(std::chrono::milliseconds timeout) override { reply_timeout_ = timeout; }
  std::string local_address() const override { return session_->local_address(); }
  // Its streams opened before the streams' member moved, opened again on the new one
  // (etcd_stream_member.cpp): an event loop's stream is read only once readable.
  Result<bool> keep_streams() override;

 private:
  // A wait looks at its lease (and the wills of the lost) at least this often.
  static constexpr std::chrono::milliseconds kLongestStep{500};
  Clock::time_point reply_deadline() const;
  Result<nlohmann::json> call(const std::string& path, const nlohmann::json& request);
  // The values of these keys now (one range over their common prefix), and the revision read.
  Result<std::vector<std::optional<std::string>>> read(const std::vector<std::string>& keys,
                                                       long long& revision, bool then_watched);
  // start_get's stream (etcd_round_watch.cpp).
  void watch_on(HttpConnection connection);
  Result<bool> open_stream(const std::string& first);  // first, and the keys followed
  Result<bool> rewatch();  // the same keys again (on another member), from where it was
  // Reads one message of the stream: start_get's key's value once put (all covered, kept).
  Result<std::optional<std::string>> next_of_watch(Clock::time_point until, bool& read_one);
  Result<std::optional<std::string>> wait_on_stream(const std::string& key,
                                                    Clock::time_point deadline);
  // finish_get's and wait_on_stream's reads; each caller then flags what they left unread.
  Result<std::optional<std::string>> finish_get_now();
  Result<std::optional<std::string>> wait_on_stream_now(const std::string& key,
                                                        Clock::time_point deadline);
  void hold(std::string value);            // start_get's value, for finish_get: fd() readable
  std::optional<std::string> take_held();  // that value, once: fd() quiet again
  // A will's put: under `will_key` (will_key_ or lasting_will_key_), with the session's lease.
  nlohmann::json will_put(const std::string& will_key, std::string_view key,
                          std::string_view value) const;
  nlohmann::json cleared(const std::string& will_key) const;  // a will's put, emptied
  Result<std::string> transaction(std::string_view key, std::string_view expected,
                                  std::string_view desired, bool leased);

  std::shared_ptr<EtcdSession> session_;
  std::string will_key_;  // this connection's will, under the session's lease
  bool will_set_ = false;
  std::string lasting_will_key_;  // its lasting will (BatchOp::lasting_will), beside it
  bool lasting_will_set_ = false;
  std::chrono::milliseconds reply_timeout_{0};
  // start_get's stream: the keys it watches, and their values as put.
  std::optional<HttpConnection> watch_;
  std::size_t watch_epoch_ = 0;  // the session's stream epoch it was opened at
  UniqueFd ready_fd_;
  std::string watched_;                      // start_get's key
  std::vector<std::string> followed_;        // follow_beside's keys
  std::set<std::string> covered_;            // the keys the stream watches
  long long stream_from_ = 0;                // the first revision it has not seen
  std::map<std::string, std::string> seen_;  // what came of them
  std::optional<std::string> held_;          // watched_'s value, come while get() waited
  UniqueFd held_fd_;                         // an eventfd in ready_fd_: readable while held_
  // An eventfd in ready_fd_: readable while the stream holds a message read from its socket
  // with the one before it (the socket, read dry, wakes nobody for it). flag_unread() sets it
  // after every read of the stream.
  UniqueFd unread_fd_;
  void flag_unread();
  // wait_count's watch, from the count's creation where the history is there.
  Result<bool> watch_count(std::string_view count_key, bool from_creation = true);
  // Reads the count's watch until a message came or the deadline passed (a lost member's
  // watch opened again on another; a history etcd compacted away given up).
  Result<bool> next_count_message(Clock::time_point deadline);
  std::optional<HttpConnection> count_watch_;
  std::size_t count_epoch_ = 0;
  std::string count_key_;
  std::int64_t count_ = 0;
  std::map<std::int64_t, std::string> brought_;  // by the count's version: what arrived
  std::int64_t history_lost_ = 0;                // versions up to this one cannot be read
  long long count_revision_ = 0;                 // the last revision of the count seen
};

}  // namespace aml::etcd
