#include "etcd/etcd_session.hpp"

#include <unistd.h>

#include <algorithm>

#include "etcd/base64.hpp"
#include "etcd/gateway_json.hpp"
#include "etcd/grpc_channel.hpp"

namespace aml::etcd {
namespace {

using nlohmann::json;

// A unary call on one member gives up after a quarter of the lease (within these bounds), so
// that a lost member costs little: a member without a leader (its leader just lost, an
// election under way) holds a keepalive until one is elected, and the lease must still be
// renewed through another member in time.
constexpr std::chrono::milliseconds kShortestMemberTry{500};
constexpr std::chrono::milliseconds kLongestMemberTry{2000};
// How long a batch's "absent at revision R" stays good for a watch from R + 1.
constexpr std::chrono::milliseconds kAbsentKept{10000};

}  // namespace

std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(prefix.back());
    if (last < 0xff) {
      ++last;
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

Result<std::shared_ptr<EtcdSession>> EtcdSession::start(SessionOptions options,
                                                        std::chrono::milliseconds timeout) {
  return open(std::move(options), timeout, true);
}

// The job's generation is the one this session joined: a launcher that comes back after the
// run ended finds that run's end, not a new run of its own.
Result<std::shared_ptr<EtcdSession>> EtcdSession::renew(std::chrono::milliseconds timeout) const {
  return open(options_, timeout, false);
}

bool EtcdSession::lease_ended() const {
  return expired_ || (keeper_ && keeper_->ended().has_value());
}

bool EtcdSession::ask_lease_ended() {
  if (lease_ended() || !keeper_) return lease_ended();
  if (Clock::now() - keeper_->last_renewed() < options_.lease_ttl) return false;
  auto answer = call("/v3/lease/timetolive", {{"ID", lease_}}, Clock::now() + member_try());
  if (answer && number_of(*answer, "TTL") == -1) expired_ = true;  // etcd's word for gone
  return expired_;
}

Result<std::shared_ptr<EtcdSession>> EtcdSession::open(SessionOptions options,
                                                       std::chrono::milliseconds timeout,
                                                       bool join_generation) {
  std::shared_ptr<EtcdSession> session(new EtcdSession(std::move(options)));
  const SessionOptions& o = session->options_;
  const auto deadline = Clock::now() + timeout;
  bool grpc = false;
  if (o.access.transport != Transport::gateway) {
    const std::string why_not = GrpcChannel::unavailable();
    if (!why_not.empty() && o.access.transport == Transport::grpc) {
      return invalid("rdzv-conf", "transport=grpc", "libnghttp2 in the image (" + why_not + ")");
    }
    grpc = why_not.empty();
  }
  std::shared_ptr<TlsContext> tls;
  if (o.access.tls) {
    auto context = TlsContext::create(o.access.ca_file, o.access.cert_file, o.access.key_file);
    if (!context) return context.error();
    tls = std::move(*context);
  }
  // Launchers start on different members: a thousand of them do not all load the first.
  session->calls_.emplace(o.endpoints, o.access, std::move(tls), grpc,
                          static_cast<std::size_t>(getpid()),
                          std::clamp<std::chrono::milliseconds>(o.lease_ttl / 4, kShortestMemberTry,
                                                                kLongestMemberTry));
  if (!o.access.user.empty()) {
    if (auto in = session->calls_->authenticate(deadline); !in) return in.error();
  }
  const long long ttl = std::max<long long>(2, (o.lease_ttl.count() + 999) / 1000);
  auto granted = session->call("/v3/lease/grant", {{"TTL", std::to_string(ttl)}}, deadline);
  if (!granted) return granted.error();
  session->lease_ = text_of(*granted, "ID");
  if (session->lease_.empty()) return invalid("etcd", session->endpoints_text(), "a lease");
  session->keeper_ =
      std::make_unique<LeaseKeeper>(session->calls_->another(), session->lease_, o.lease_ttl);
  session->renewal_seen_ = session->keeper_->last_renewed();
  session->stream_member_ = session->calls_->current();
  if (o.endpoints.size() > 1) {
    session->stream_check_ = std::make_unique<StreamMemberCheck>(
        session->calls_->another(), o.prefix + "stream-check", o.lease_ttl / 3);
    session->stream_check_->ask(session->stream_member_);
  }
  if (join_generation) {
    if (auto joined = session->join_generation(deadline); !joined) return joined.error();
  }
  return session;
}

EtcdSession::~EtcdSession() {
  const bool ended = lease_ended();
  keeper_.reset();                                 // no renewal after the revoke
  if (lease_.empty() || !calls_ || ended) return;  // an ended lease is etcd's to forget
  (void)call("/v3/lease/revoke", {{"ID", lease_}}, Clock::now() + kLongestMemberTry);
}

Result<HttpConnection> EtcdSession::watch(std::string_view key, std::string_view range_end,
                                          long long revision, bool deletions_only,
                                          Clock::time_point deadline,
                                          const std::vector<std::string>& also, bool once_each) {
  json create = {{"key", to_base64(full_key(key))}, {"prev_kv", deletions_only}};
  if (!range_end.empty()) create["range_end"] = to_base64(full_key(range_end));
  if (revision > 0) create["start_revision"] = std::to_string(revision);
  if (deletions_only) create["filters"] = json::array({"NOPUT"});
  std::string body = json{{"create_request", create}}.dump();
  create.erase("range_end");
  for (const std::string& other : also) {
    create["key"] = to_base64(full_key(other));
    body += json{{"create_request", create}}.dump();
  }
  std::string last_error = "no member tried";
  const std::size_t members = options_.endpoints.size();
  for (std::size_t tried = 0; Clock::now() < deadline && (!once_each || tried < members); ++tried) {
    const auto try_until = std::min(deadline, Clock::now() + member_try());
    const std::size_t member = (stream_member_ + tried) % members;
    auto opened = calls_->open(options_.endpoints[member], try_until);
    if (!opened && opened.error().variable == kTlsRefusal) {
      return opened.error();
    } else if (!opened) {
      last_error = opened.error().message();
    } else if (auto status = opened->post_stream("/v3/watch", body, try_until); !status) {
      last_error = status.error().message();
    } else if (*status != 200) {
      last_error = opened->where() + " refused a watch (HTTP " + std::to_string(*status) + ")";
    } else if (auto created = opened->next_message(try_until); !created || !*created) {
      last_error = opened->where() + " did not start a watch";
    } else {
      if (member != stream_member_) streams_moved_to(member);  // the others' member failed
      return std::move(*opened);
    }
    if (tried % members == members - 1 && !once_each) usleep(kMemberRetryPause.count() * 1000);
  }
  return invalid("etcd", endpoints_text(),
                 "an etcd member that starts a watch (none did in time; last: " + last_error + ")");
}

Result<std::vector<WatchEvent>> EtcdSession::events_of(const std::string& message) const {
  auto parsed = json::parse(message, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return invalid("etcd", endpoints_text(), "a watch message in JSON");
  }
  if (parsed.contains("error")) {
    return invalid("etcd", endpoints_text(),
                   "a watch that goes on (etcd said: " + text_of(parsed["error"], "message") + ")");
  }
  const json& result = parsed.value("result", json::object());
  if (result.value("canceled", false)) {
    return invalid(
        "etcd", endpoints_text(),
        "a watch that goes on (it was canceled: " + text_of(result, "cancel_reason") + ")");
  }
  std::vector<WatchEvent> events;
  for (const json& e : result.value("events", json::array())) {
    WatchEvent event;
    event.put = e.value("type", std::string("PUT")) != "DELETE";
    const json& kv = e.value("kv", json::object());
    auto key = from_base64(text_of(kv, "key"));
    if (!key || !key->starts_with(options_.prefix)) continue;
    event.key = key->substr(options_.prefix.size());
    event.value = from_base64(text_of(kv, "value")).value_or("");
    if (e.contains("prev_kv"))
      event.previous = from_base64(text_of(e["prev_kv"], "value")).value_or("");
    event.revision = number_of(kv, "mod_revision");
    event.version = number_of(kv, "version");
    events.push_back(std::move(event));
  }
  return events;
}

bool EtcdSession::renewed_since_asked() {
  const auto renewed = keeper_->last_renewed();
  const bool since = renewed > renewal_seen_;
  renewal_seen_ = renewed;
  return since;
}

void EtcdSession::remember_absent(const std::vector<std::string>& keys, long long revision) {
  absent_.clear();  // only the last batch's
  for (const std::string& key : keys) absent_[key] = {revision, Clock::now()};
}

std::optional<long long> EtcdSession::absent_since(const std::string& key) {
  auto found = absent_.find(key);
  if (found == absent_.end()) return std::nullopt;
  const auto [revision, when] = found->second;
  absent_.erase(found);
  // Soon after, or the revision may be compacted away (etcd's --auto-compaction-*).
  if (Clock::now() - when > kAbsentKept) return std::nullopt;
  return revision;
}

Result<bool> EtcdSession::tend(Clock::time_point deadline) {
  if (auto ended = keeper_->ended()) return *ended;
  check_stream_member();
  // Its keeper heard no member for two TTLs (a call may take one): etcd is out of reach.
  if (auto silent = keeper_->unanswered_for(2 * options_.lease_ttl)) return *silent;
  return fire_wills(deadline);
}

}  // namespace aml::etcd
