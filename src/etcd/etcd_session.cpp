#include "etcd/etcd_session.hpp"

#include <unistd.h>

#include <algorithm>

#include "etcd/base64.hpp"
#include "etcd/gateway_json.hpp"
#include "etcd/grpc_channel.hpp"

namespace aml::etcd {
namespace {

using nlohmann::json;

// A member that cannot serve now (lost, no leader, overloaded) is left for the next one.
constexpr std::chrono::milliseconds kRetryPause{100};
// A unary call on one member gives up after a quarter of the lease (within these bounds), so
// that a lost member costs little: a member without a leader (its leader just lost, an
// election under way) holds a keepalive until one is elected, and the lease must still be
// renewed through another member in time.
constexpr std::chrono::milliseconds kShortestMemberTry{500};
constexpr std::chrono::milliseconds kLongestMemberTry{2000};
// Once etcd was found unreachable: how long a call tries until a member answers again.
constexpr std::chrono::milliseconds kUnreachableTry{500};
// How long a batch's "absent at revision R" stays good for a watch from R + 1.
constexpr std::chrono::milliseconds kAbsentKept{10000};

std::pair<std::string, int> host_port(const std::string& endpoint) {
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos) return {endpoint, 2379};
  std::string host = endpoint.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return {host, std::atoi(endpoint.c_str() + colon + 1)};
}

constexpr long long kUnauthenticated = 16;  // gRPC's code: no token, or an expired one

// What to do about a refusal of etcd's access control.
std::string auth_hint(const json& answer, const Access& access) {
  const std::string said = text_of(answer, "error");
  if (said.find("user name is empty") != std::string::npos ||
      said.find("invalid auth token") != std::string::npos ||
      (access.user.empty() && said.find("permission denied") != std::string::npos)) {
    return ": etcd's authentication is on; give its user with --rdzv-conf "
           "user=NAME,password_file=FILE";
  }
  if (said.find("permission denied") != std::string::npos) {
    return ": etcd user " + access.user +
           " needs readwrite on the job's keys (etcdctl role "
           "grant-permission ROLE --prefix=true readwrite /aml-launch/)";
  }
  return "";
}

// etcd's JSON gateway says this in plain text for a client certificate with a CommonName when
// etcd's authentication is on.
std::string gateway_hint(const std::string& said) {
  if (said.find("CommonName of client") == std::string::npos) return "";
  return ": with etcd's authentication on, the launchers' client certificate must have no "
         "CommonName (the gateway cannot pass it on as the user)";
}

// gRPC's codes for a member that cannot answer now: another may.
bool try_another(int http_status, const json& answer) {
  const long long code = number_of(answer, "code");
  return http_status >= 500 || code == 14 || code == 4 || code == 1 || code == 8;
}

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
  std::shared_ptr<EtcdSession> session(new EtcdSession(std::move(options)));
  // Launchers start on different members: a thousand of them do not all load the first.
  session->current_ = static_cast<std::size_t>(getpid()) % session->options_.endpoints.size();
  const auto deadline = Clock::now() + timeout;
  const Transport transport = session->options_.access.transport;
  if (transport != Transport::gateway) {
    const std::string why_not = GrpcChannel::unavailable();
    if (!why_not.empty() && transport == Transport::grpc) {
      return invalid("rdzv-conf", "transport=grpc", "libnghttp2 in the image (" + why_not + ")");
    }
    session->grpc_ = why_not.empty();
  }
  if (session->options_.access.tls) {
    const Access& a = session->options_.access;
    auto context = TlsContext::create(a.ca_file, a.cert_file, a.key_file);
    if (!context) return context.error();
    session->tls_ = std::move(*context);
  }
  if (!session->options_.access.user.empty()) {
    if (auto in = session->authenticate(deadline); !in) return in.error();
  }
  const long long ttl = std::max<long long>(2, (session->options_.lease_ttl.count() + 999) / 1000);
  auto granted = session->call("/v3/lease/grant", {{"TTL", std::to_string(ttl)}}, deadline);
  if (!granted) return granted.error();
  session->lease_ = text_of(*granted, "ID");
  if (session->lease_.empty()) return invalid("etcd", session->endpoints_text(), "a lease");
  session->next_keep_alive_ = Clock::now() + session->options_.lease_ttl / 3;
  if (auto joined = session->join_generation(deadline); !joined) return joined.error();
  return session;
}

EtcdSession::~EtcdSession() {
  if (lease_.empty()) return;
  (void)call("/v3/lease/revoke", {{"ID", lease_}}, Clock::now() + kLongestMemberTry);
}

std::chrono::milliseconds EtcdSession::member_try() const {
  return std::clamp<std::chrono::milliseconds>(options_.lease_ttl / 4, kShortestMemberTry,
                                               kLongestMemberTry);
}

std::string EtcdSession::endpoints_text() const {
  std::string text;
  for (const auto& endpoint : options_.endpoints) text += (text.empty() ? "" : ",") + endpoint;
  return text;
}

Result<HttpConnection> EtcdSession::open(const std::string& endpoint, Clock::time_point deadline) {
  const auto [host, port] = host_port(endpoint);
  auto opened = HttpConnection::open(host, port, deadline, tls_);
  if (opened) opened->set_authorization(token_);
  return opened;
}

Result<std::unique_ptr<UnaryChannel>> EtcdSession::open_unary(const std::string& endpoint,
                                                              Clock::time_point deadline) {
  std::unique_ptr<UnaryChannel> channel;
  if (grpc_) {
    const auto [host, port] = host_port(endpoint);
    auto opened = GrpcChannel::open(host, port, deadline, tls_);
    if (!opened) return opened.error();
    channel = std::move(*opened);
    channel->set_authorization(token_);
  } else {
    auto opened = open(endpoint, deadline);  // with the token
    if (!opened) return opened.error();
    channel = std::make_unique<HttpConnection>(std::move(*opened));
  }
  return channel;
}

Result<bool> EtcdSession::authenticate(Clock::time_point deadline) {
  token_.clear();
  if (unary_) unary_->set_authorization("");
  const Access& a = options_.access;
  auto answer =
      call("/v3/auth/authenticate", {{"name", a.user}, {"password", a.password}}, deadline);
  if (!answer) return answer.error();
  token_ = text_of(*answer, "token");
  if (token_.empty()) {
    return invalid("etcd", endpoints_text(),
                   "an auth token for etcd user " + a.user + " (is etcd's authentication on?)");
  }
  if (unary_) unary_->set_authorization(token_);
  return true;
}

Result<json> EtcdSession::call(const std::string& path, const json& request,
                               Clock::time_point deadline) {
  if (unreachable_) deadline = std::min(deadline, Clock::now() + kUnreachableTry);
  std::string last_error = "no member tried";
  const std::size_t members = options_.endpoints.size();
  bool reauthenticated = false;
  for (int attempt = 0;; ++attempt) {
    if (!unary_) {
      auto opened = open_unary(options_.endpoints[current_ % members],
                               std::min(deadline, Clock::now() + member_try()));
      if (opened) {
        unary_ = std::move(*opened);
        local_address_ = unary_->local_address();
      } else if (opened.error().variable == kTlsRefusal) {
        return opened.error();
      } else {
        last_error = opened.error().message();
      }
    }
    if (unary_) {
      auto answer = unary_->unary(path, request, std::min(deadline, Clock::now() + member_try()));
      if (answer) {
        auto parsed = json::parse(answer->body, nullptr, false);
        if (parsed.is_discarded() || !parsed.is_object()) {
          last_error = unary_->where() + " answered " + path + " with HTTP " +
                       std::to_string(answer->status) + " and no JSON (is it etcd?): \"" +
                       answer->body.substr(0, 160) + "\"" + gateway_hint(answer->body);
        } else if (answer->status == 200) {
          unreachable_ = false;
          return parsed;
        } else if (number_of(parsed, "code") == kUnauthenticated && !token_.empty() &&
                   !reauthenticated) {
          // The token expired (etcd's --auth-token-ttl): ask for another, then the same again.
          reauthenticated = true;
          if (auto in = authenticate(deadline); !in) return in.error();
          continue;
        } else if (!try_another(answer->status, parsed)) {
          return invalid("etcd", unary_->where() + path,
                         "an accepted request (etcd said: " + text_of(parsed, "error") + ")" +
                             auth_hint(parsed, options_.access));
        } else {
          last_error = unary_->where() + ": " + text_of(parsed, "error");
        }
      } else if (answer.error().variable == kTlsRefusal) {
        return answer.error();
      } else {
        last_error = answer.error().message();
      }
      unary_.reset();
    }
    ++current_;  // the next member
    if (Clock::now() + kRetryPause >= deadline) {
      unreachable_ = true;
      break;
    }
    if (attempt % static_cast<int>(members) == static_cast<int>(members) - 1)
      usleep(kRetryPause.count() * 1000);
  }
  return invalid("etcd", endpoints_text(),
                 "an etcd member that answers (none did in time; last: " + last_error + ")");
}

Result<HttpConnection> EtcdSession::watch(std::string_view key, std::string_view range_end,
                                          long long revision, bool deletions_only,
                                          Clock::time_point deadline,
                                          const std::vector<std::string>& also) {
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
  for (std::size_t tried = 0; Clock::now() < deadline; ++tried) {
    const auto try_until = std::min(deadline, Clock::now() + member_try());
    auto opened = open(options_.endpoints[(current_ + tried) % members], try_until);
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
      return std::move(*opened);
    }
    if (tried % members == members - 1) usleep(kRetryPause.count() * 1000);
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

Result<bool> EtcdSession::keep_alive(Clock::time_point deadline) {
  auto answer = call("/v3/lease/keepalive", {{"ID", lease_}}, deadline);
  if (!answer) return answer.error();
  const json& result = answer->value("result", json::object());
  if (number_of(result, "TTL") <= 0) {
    return invalid("etcd lease", lease_,
                   "a live lease; it expired: this launcher was silent for over --node-timeout "
                   "(a pause, a cut-off) and the job counted it lost");
  }
  next_keep_alive_ = Clock::now() + options_.lease_ttl / 3;
  return true;
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
  if (Clock::now() >= next_keep_alive_) {
    if (auto kept = keep_alive(deadline); !kept) return kept.error();
  }
  return fire_wills(deadline);
}

}  // namespace aml::etcd
