#include "etcd/member_calls.hpp"

#include <unistd.h>

#include "etcd/gateway_json.hpp"
#include "etcd/grpc_channel.hpp"
#include "etcd/socket_wait.hpp"

namespace aml::etcd {
namespace {

using nlohmann::json;

// Once etcd was found unreachable: how long a call tries until a member answers again.
constexpr std::chrono::milliseconds kUnreachableTry{500};
constexpr long long kUnauthenticated = 16;  // gRPC's code: no token, or an expired one

std::pair<std::string, int> host_port(const std::string& endpoint) {
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos) return {endpoint, 2379};
  std::string host = endpoint.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return {host, std::atoi(endpoint.c_str() + colon + 1)};
}

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

}  // namespace

// gRPC's codes for a member that cannot answer now: another may. And etcd's word for a request
// that ran out of time inside the member, whatever its code: a member without a quorum (cut off,
// or just restarted while its peers were away) answered a lease's grant so, as gRPC's "unknown"
// (the fault campaign's etcd 400: a launcher started then exited 2 instead of waiting).
bool member_cannot_serve_now(int http_status, const json& answer) {
  const long long code = number_of(answer, "code");
  if (http_status >= 500 || code == 14 || code == 4 || code == 1 || code == 8) return true;
  const std::string said = text_of(answer, "error");
  return said.find("context deadline exceeded") != std::string::npos ||
         said.find("etcdserver: request timed out") != std::string::npos;
}

MemberCalls::MemberCalls(std::vector<std::string> endpoints, Access access,
                         std::shared_ptr<TlsContext> tls, bool grpc, std::size_t first_member,
                         std::chrono::milliseconds member_try)
    : endpoints_(std::move(endpoints)),
      access_(std::move(access)),
      tls_(std::move(tls)),
      grpc_(grpc),
      current_(first_member % endpoints_.size()),
      member_try_(member_try) {}

MemberCalls MemberCalls::another() const {
  MemberCalls calls(endpoints_, access_, tls_, grpc_, current_, member_try_);
  calls.token_ = token_;
  return calls;
}

std::string MemberCalls::endpoints_text() const {
  std::string text;
  for (const auto& endpoint : endpoints_) text += (text.empty() ? "" : ",") + endpoint;
  return text;
}

Result<HttpConnection> MemberCalls::open(const std::string& endpoint,
                                         Clock::time_point deadline) const {
  const auto [host, port] = host_port(endpoint);
  auto opened = HttpConnection::open(host, port, deadline, tls_);
  if (opened) opened->set_authorization(token_);
  return opened;
}

Result<std::unique_ptr<UnaryChannel>> MemberCalls::open_unary(const std::string& endpoint,
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

Result<bool> MemberCalls::authenticate(Clock::time_point deadline) {
  token_.clear();
  if (unary_) unary_->set_authorization("");
  auto answer = call("/v3/auth/authenticate",
                     {{"name", access_.user}, {"password", access_.password}}, deadline);
  if (!answer) return answer.error();
  token_ = text_of(*answer, "token");
  if (token_.empty()) {
    return invalid(
        "etcd", endpoints_text(),
        "an auth token for etcd user " + access_.user + " (is etcd's authentication on?)");
  }
  if (unary_) unary_->set_authorization(token_);
  return true;
}

Result<json> MemberCalls::call(const std::string& path, const json& request,
                               Clock::time_point deadline) {
  if (unreachable_) deadline = std::min(deadline, Clock::now() + kUnreachableTry);
  std::string last_error = "no member tried";
  const std::size_t members = endpoints_.size();
  bool reauthenticated = false;
  for (int attempt = 0;; ++attempt) {
    if (!unary_) {
      auto opened = open_unary(endpoints_[current_ % members],
                               std::min(deadline, Clock::now() + member_try_));
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
      auto answer = unary_->unary(path, request, std::min(deadline, Clock::now() + member_try_));
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
        } else if (!member_cannot_serve_now(answer->status, parsed)) {
          return invalid("etcd", unary_->where() + path,
                         "an accepted request (etcd said: " + text_of(parsed, "error") + ")" +
                             auth_hint(parsed, access_));
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
    if (wait_cancelled()) break;
    if (Clock::now() + kMemberRetryPause >= deadline) {
      unreachable_ = true;
      break;
    }
    if (attempt % static_cast<int>(members) == static_cast<int>(members) - 1)
      usleep(kMemberRetryPause.count() * 1000);
  }
  return invalid("etcd", endpoints_text(),
                 "an etcd member that answers (none did in time; last: " + last_error + ")");
}

}  // namespace aml::etcd
