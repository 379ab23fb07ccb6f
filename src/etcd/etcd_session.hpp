// One launcher's session with an etcd cluster (DESIGN §5): its lease (its liveness and its
// last will: kept alive while it runs by a thread of its own, lease_keeper.hpp; revoked on a
// clean exit, expired after a death or a silence of --node-timeout), unary calls that move to
// another member when one is lost (member_calls.hpp), and the firing of the last wills of
// launchers whose lease ended. Shared by the launcher's connections (etcd_rendezvous.hpp),
// used from the launcher's main thread: every call tends the session.
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "etcd/etcd_access.hpp"
#include "etcd/http_connection.hpp"
#include "etcd/lease_keeper.hpp"
#include "etcd/member_calls.hpp"
#include "etcd/stream_member_check.hpp"

namespace aml::etcd {

struct SessionOptions {
  std::vector<std::string> endpoints;  // host:port of each member
  std::string prefix;                  // every key of the job is under it
  std::chrono::milliseconds lease_ttl{60000};
  // A job's id is often used again (a Kubeflow job's name, restarted whole): each run of it
  // has a generation of its own under the prefix, the next one once this key exists in the
  // last (the job's end).
  std::string ended_key;
  Access access;        // TLS and etcd's user, where the cluster requires them
  int generation = -1;  // the one joined (a session renewed stays in it)
};

// A watch's first message says it was created; what follows are its events.
struct WatchEvent {
  bool put = true;  // else a deletion
  std::string key;  // without the job's prefix
  std::string value;
  std::string previous;  // a deletion's value before (prev_kv)
  long long revision = 0;
  long long version = 0;  // how many puts the key has had since it was made
};

class EtcdSession {
 public:
  // Grants the lease, trying the members until one answers or `timeout` passed.
  static Result<std::shared_ptr<EtcdSession>> start(SessionOptions options,
                                                    std::chrono::milliseconds timeout);
  // A session under a new lease, in this one's generation of the job: where this one's lease
  // ended (lease_ended), the launcher comes back under a new one, a newcomer to the job.
  Result<std::shared_ptr<EtcdSession>> renew(std::chrono::milliseconds timeout) const;
  // etcd said the lease expired: this launcher was silent past it and counted lost. Nothing
  // done in this session counts any more.
  bool lease_ended() const;
  // The same, asking etcd where its keeper could not renew it for a whole TTL (etcd out of its
  // reach: only etcd can say whether it lives).
  bool ask_lease_ended();
  int generation() const { return options_.generation; }
  ~EtcdSession();  // revokes the lease: this launcher's last wills fire at once
  EtcdSession(const EtcdSession&) = delete;
  EtcdSession& operator=(const EtcdSession&) = delete;

  // A unary call (path: "/v3/kv/put") on the member in use, moving on to the others while
  // they fail, until the deadline. An error names every endpoint.
  Result<nlohmann::json> call(const std::string& path, const nlohmann::json& request,
                              Clock::time_point deadline) {
    return calls_->call(path, request, deadline);
  }
  // A watch of [key, range_end) from `revision` on, on the first member that answers; and of
  // the keys `also` from the same revision, where given, on the same stream (the gateway reads
  // each watch request of the body). once_each: each member tried once at most.
  Result<HttpConnection> watch(std::string_view key, std::string_view range_end, long long revision,
                               bool deletions_only, Clock::time_point deadline,
                               const std::vector<std::string>& also = {}, bool once_each = false);
  // Every stream of the session (its watches) is opened on one member, the streams' member
  // (etcd_stream_member.cpp); the epoch counts its moves. A stream opened at an older epoch
  // than this one is on a member that stopped serving: its reader opens it again on the
  // streams' member, from the first revision it has not seen.
  std::size_t stream_epoch() const { return stream_epoch_; }
  // Reads one watch message: its events (empty: created, or a progress note).
  Result<std::vector<WatchEvent>> events_of(const std::string& message) const;

  // Fires the last wills of launchers that are gone. An error: the lease ended (etcd said it
  // expired: this launcher was counted lost), or no member answered its keeper for two TTLs.
  Result<bool> tend(Clock::time_point deadline);
  // Whether the lease was renewed since the last time this was asked: etcd answered.
  bool renewed_since_asked();
  // Whether this launcher sets the wills of the others (watches their deletions). Only a few
  // launchers of a job do: each will put is an event for every launcher that watches.
  Result<bool> watch_wills(bool on, Clock::time_point deadline);
  // Which of these leases hold no will any more: they ended, whoever watched (or nobody did:
  // a will's deletion is an event only for a watch open then).
  Result<std::vector<long>> lapsed(const std::vector<long>& leases, Clock::time_point deadline);
  // When a wait should end to tend the session again (and look at its lease's keeper).
  Clock::time_point next_tending() const { return Clock::now() + options_.lease_ttl / 3; }
  // Keys a batch found absent at its revision: a wait for one of them soon after (on any of
  // the launcher's connections) watches from there without reading it again. Taken once.
  void remember_absent(const std::vector<std::string>& keys, long long revision);
  std::optional<long long> absent_since(const std::string& key);

  std::string full_key(std::string_view key) const { return options_.prefix + std::string(key); }
  const std::string& lease() const { return lease_; }
  long long next_serial() { return ++serial_; }
  std::string endpoints_text() const { return calls_->endpoints_text(); }
  std::string local_address() const { return calls_->local_address(); }
  // How its unary calls go: "gRPC" or "the JSON gateway".
  std::string transport() const { return calls_->grpc() ? "gRPC" : "the JSON gateway"; }
  std::chrono::milliseconds lease_ttl() const { return options_.lease_ttl; }
  // How long a call waits on one member before it moves on to the next.
  std::chrono::milliseconds member_try() const { return calls_->member_try(); }

  static constexpr std::string_view kWills = "wills/";
  static constexpr std::string_view kClearedWill = "cleared";

 private:
  explicit EtcdSession(SessionOptions options) : options_(std::move(options)) {}
  static Result<std::shared_ptr<EtcdSession>> open(SessionOptions options,
                                                   std::chrono::milliseconds timeout,
                                                   bool join_generation);
  Result<bool> fire_wills(Clock::time_point deadline);
  Result<bool> join_generation(Clock::time_point deadline);
  Result<bool> open_will_watch(Clock::time_point deadline, bool once_each = false);
  // etcd_stream_member.cpp: where the streams' member was found not serving, the streams move
  // to the next member.
  void check_stream_member();
  void streams_moved_to(std::size_t member);

  SessionOptions options_;
  std::optional<MemberCalls> calls_;
  bool wills_on_ = false;  // watch_wills: this launcher sets the others' wills
  // Its watch's last reopening failed so, and is not tried again before then (fire_wills).
  std::optional<std::pair<Error, Clock::time_point>> wills_unopened_;
  std::optional<HttpConnection> wills_;  // deletions under kWills: launchers whose lease ended
  long long wills_seen_ = 0;             // the last revision read from that watch
  std::size_t wills_epoch_ = 0;          // the stream epoch it was opened at
  std::size_t stream_member_ = 0;        // the index in options_.endpoints of the streams' member
  std::size_t stream_epoch_ = 0;
  std::unique_ptr<StreamMemberCheck> stream_check_;  // where there are members to move to
  std::string lease_;
  std::unique_ptr<LeaseKeeper> keeper_;
  bool expired_ = false;            // ask_lease_ended heard etcd say so
  Clock::time_point renewal_seen_;  // the keeper's last renewal, when renewed_since_asked asked
  long long serial_ = 0;
  std::map<std::string, std::pair<long long, Clock::time_point>> absent_;  // revision, when
};

// The first key after every key that starts with `prefix` (etcd's range_end for a prefix).
std::string prefix_end(std::string prefix);

}  // namespace aml::etcd
