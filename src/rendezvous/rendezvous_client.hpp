// One connection of a launcher to its job's rendezvous (DESIGN §5, "Rendezvous backends"):
// the few operations the node group is written in. Two implementations, chosen at start:
// node 0's store (store_rendezvous.hpp) and etcd (etcd/etcd_rendezvous.hpp). Everything above
// (rounds, seats, the one verdict, failure news, stops, hang coordination) is written once.
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aml {

// One of several operations sent together (RendezvousClient::batch).
struct BatchOp {
  enum class Kind { set, get, add, last_will, lasting_will, create, claim };
  Kind kind = Kind::get;
  std::string key;
  std::string value;  // set, the wills, create, claim; add: what the counter brings
  static BatchOp set_to(std::string key, std::string value) {
    return {Kind::set, std::move(key), std::move(value)};
  }
  static BatchOp get_now(std::string key) { return {Kind::get, std::move(key), ""}; }
  // One more on the count at `key`; `brings`, where given, is what this counter brings
  // (RendezvousClient::arrivals gives it to whoever reads the count).
  static BatchOp add_one(std::string key, std::string brings = "") {
    return {Kind::add, std::move(key), std::move(brings)};
  }
  static BatchOp will(std::string key, std::string value) {
    return {Kind::last_will, std::move(key), std::move(value)};
  }
  // A will beside the connection's (set_last_will): a later one of those leaves it standing,
  // and clear_lasting_will takes it back. Where a connection holds one will (node 0's store),
  // it is that one.
  static BatchOp lasting_will(std::string key, std::string value) {
    return {Kind::lasting_will, std::move(key), std::move(value)};
  }
  // Set where absent: gives the value stored afterwards (compare_set with "" expected).
  static BatchOp create(std::string key, std::string value) {
    return {Kind::create, std::move(key), std::move(value)};
  }
  // As claim (below): create, but the key goes with this launcher's life.
  static BatchOp claim(std::string key, std::string value) {
    return {Kind::claim, std::move(key), std::move(value)};
  }
};

class RendezvousClient {
 public:
  virtual ~RendezvousClient() = default;

  // Operations on different keys that need not see each other, in one round trip where the
  // backend allows it (etcd: one transaction), else one after another. What each gives: get,
  // the value now (nullopt: absent); add, the new count as text (add(key, 1)); create and claim,
  // the value stored afterwards; set and last_will, nothing. A waiting launcher's steps are a few
  // of these, not a dozen calls.
  virtual Result<std::vector<std::optional<std::string>>> batch(const std::vector<BatchOp>& ops);

  virtual Result<bool> set(std::string_view key, std::string_view value) = 0;
  // Many keys at once (a round's seats): as few round trips as the backend allows.
  virtual Result<bool> set_many(const std::vector<std::pair<std::string, std::string>>& pairs) = 0;
  // The value once the key exists; nullopt when the timeout passed first.
  virtual Result<std::optional<std::string>> get(std::string_view key,
                                                 std::chrono::milliseconds timeout) = 0;
  // Adds delta (0 or 1) to the key's count and gives the new count: each caller that adds 1
  // gets a number of its own.
  virtual Result<std::int64_t> add(std::string_view key, std::int64_t delta) = 0;
  // The count at count_key (as add(count_key, 0) gives it) once it is above `above`, or as it
  // is when the timeout passed. next_key is what the next counter writes once it has its
  // number (its arrival_key): node 0's store waits on it; etcd keeps one watch on the count
  // for every call.
  virtual Result<std::int64_t> wait_count(std::string_view count_key, std::int64_t above,
                                          std::string_view next_key,
                                          std::chrono::milliseconds timeout) = 0;
  // What the counters numbered [from, to) of a count brought with add_one (nullopt: nothing
  // that could be read within the timeout). Node 0's store keeps each under arrival_key;
  // etcd keeps it in the count's own history (each put of the count carries one), so that
  // a counter's number and what it brings are one write.
  virtual Result<std::vector<std::optional<std::string>>> arrivals(
      std::string_view count_key, std::int64_t from, std::int64_t to,
      std::chrono::milliseconds timeout);
  // Where node 0's store keeps what counter `index` (from 0) brought.
  static std::string arrival_key(std::string_view count_key, std::int64_t index) {
    return std::string(count_key) + "/" + std::to_string(index);
  }
  // Where the answer to launcher number `launcher` goes, with those of the other launchers of
  // its key (round_answers.hpp): known before the launcher counts in, so that it may watch the
  // key before the round opens. Each key is written once, when the round is seated (or the job
  // ended): "late" for whoever counted after.
  static constexpr unsigned long kAnswerKeys = 64;
  static unsigned long answer_index(long launcher) {
    return static_cast<unsigned long>(launcher) % kAnswerKeys;
  }
  static std::string answer_key(std::string_view count_key, long launcher) {
    return std::string(count_key) + "/answers/" + std::to_string(answer_index(launcher));
  }
  virtual Result<bool> check(const std::vector<std::string>& keys) = 0;
  virtual Result<bool> wait(const std::vector<std::string>& keys,
                            std::chrono::milliseconds timeout) = 0;
  // Each key's value once all exist or the timeout passed (nullopt: still absent).
  virtual Result<std::vector<std::optional<std::string>>> get_all(
      const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  virtual Result<bool> erase(std::string_view key) = 0;
  // Stores `desired` where the value is `expected` ("" for an absent key); gives the value
  // stored afterwards.
  virtual Result<std::string> compare_set(std::string_view key, std::string_view expected,
                                          std::string_view desired) = 0;
  // Like compare_set with "" expected, but the key lasts only while this launcher lives: it
  // vanishes with its death (a lease's end). Node 0's store goes away with its launcher, so
  // there it is a plain compare_set.
  virtual Result<std::string> claim(std::string_view key, std::string_view value) = 0;
  // When this launcher dies (or, for etcd, is silent past its lease), key is set to value if
  // it is absent. One will per connection (and the lasting one beside it: BatchOp::lasting_will);
  // a new one replaces it.
  virtual Result<bool> set_last_will(std::string_view key, std::string_view value) = 0;
  virtual Result<bool> clear_last_will() = 0;
  // The lasting will (BatchOp::lasting_will) taken back, the connection's too.
  virtual Result<bool> clear_lasting_will() { return clear_last_will(); }
  // Liveness watched by node 0's store (silent() names the quiet ones). etcd watches leases
  // instead: there a death or a silence past the lease fires the last will, and silent() is
  // always empty.
  virtual Result<bool> identify(std::string_view name) = 0;
  virtual Result<std::vector<std::string>> silent(std::chrono::milliseconds at_least) = 0;
  // Says "alive". True where the rendezvous itself answered (etcd's lease keepalive): the
  // rendezvous is known alive. Node 0's store sends nothing and says false: a follower's watch
  // asking again is its sign of life there (group_timing.hpp).
  virtual Result<bool> heartbeat() = 0;
  // The clock of whoever serves the rendezvous (node 0's store's host), CLOCK_REALTIME in
  // nanoseconds: the launchers' one clock for comparing their ranks' times. etcd has none to
  // give: an error.
  virtual Result<std::int64_t> clock_ns() {
    return invalid("the rendezvous", "etcd", "a store that tells its clock (etcd does not)");
  }
  // etcd: whether this launcher sets the last wills of others whose leases end. A few of a
  // job's launchers do (each will put is an event for every launcher that watches the wills);
  // node 0's store sets them itself.
  virtual Result<bool> watch_wills(bool on) {
    (void)on;
    return true;
  }

  // etcd: which of these launchers' leases ended (their numbers are their leases), whether or
  // not a watcher of the wills was there to set their "gone" keys then. Node 0's store sets
  // every will itself: none.
  virtual Result<std::vector<long>> lapsed(const std::vector<long>& launchers) {
    (void)launchers;
    return std::vector<long>{};
  }

  // A number no other launcher of the job has, where the rendezvous gives one without a
  // call (etcd: this launcher's lease ID, never 0); nullopt: the caller counts one (add).
  virtual std::optional<long> own_number() const { return std::nullopt; }
  // etcd: this launcher's lease ended (it was silent past it, and the job counted it lost):
  // nothing done on this connection counts any more, and a new one is dialed under a new
  // lease. Node 0's store has no lease: a connection there ends when its socket does.
  virtual bool lease_ended() const { return false; }
  // The same, asking the rendezvous where this launcher could not tell (etcd out of its reach
  // for a whole lease).
  virtual bool ask_lease_ended() { return lease_ended(); }
  // etcd: the run of the job's id this launcher is in (a job id used again runs as the next
  // generation, its rounds from 0 again); -1 where the rendezvous has none.
  virtual int generation() const { return -1; }
  // etcd: a stream on a member that stopped serving is moved to one that serves, from where
  // it was (etcd_stream_member.cpp); an event loop calls it at each beat. Node 0's store: its
  // wait is answered every watch_interval, and a silence there is node 0's.
  virtual Result<bool> keep_streams() { return true; }

  // For event loops: start_get begins waiting for the key; once fd() is readable, finish_get
  // gives its value (nullopt: nothing yet; start again).
  virtual Result<bool> start_get(std::string_view key, std::chrono::milliseconds timeout) = 0;
  virtual Result<std::optional<std::string>> finish_get() = 0;
  virtual int fd() const = 0;
  // Asked before start_get: whether its wait can follow this other key too (etcd: the same
  // watch), so that get(beside) on this connection waits there without a watch of its own
  // and start_get's value, should it come meanwhile, still makes fd() readable. Node 0's
  // store cannot: its connection has one wait at a time.
  virtual bool follow_beside(std::string_view beside) {
    (void)beside;
    return false;
  }

  // A reply that does not come within this time is an error (0: wait for ever).
  virtual void set_reply_timeout(std::chrono::milliseconds timeout) = 0;
  // This end's address: the address the others reach this node by.
  virtual std::string local_address() const = 0;
};

}  // namespace aml
