// Unary calls to an etcd cluster (DESIGN §5): one connection at a time, to the member in use,
// moving on to the next while one fails (lost, no leader, overloaded) until the deadline, and
// asking etcd's auth token again when it expired. A launcher's session makes its calls through
// one; its lease keeper, on a thread of its own, through another (lease_keeper.hpp).
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "etcd/etcd_access.hpp"
#include "etcd/http_connection.hpp"
#include "etcd/unary_channel.hpp"

namespace aml::etcd {

// A member that cannot serve now (lost, no leader, overloaded) is left for the next one after
// this pause, once every member was tried.
inline constexpr std::chrono::milliseconds kMemberRetryPause{100};

// Whether an answer that is not a success says the member cannot serve now (no leader, lost,
// overloaded, a request that ran out of time in it): another member, or the same later, may.
// Else it is a refusal, named to the user (a permission, a malformed request).
bool member_cannot_serve_now(int http_status, const nlohmann::json& answer);

class MemberCalls {
 public:
  // first_member: where to start (launchers start on different members: a thousand of them do
  // not all load the first); member_try: how long a call waits on one member.
  MemberCalls(std::vector<std::string> endpoints, Access access, std::shared_ptr<TlsContext> tls,
              bool grpc, std::size_t first_member, std::chrono::milliseconds member_try);
  MemberCalls(MemberCalls&&) = default;

  // A call (path: "/v3/kv/put") on the member in use, then the others, until the deadline. An
  // error names every endpoint. A call of a thread whose waits were cancelled (socket_wait.hpp)
  // ends at once.
  Result<nlohmann::json> call(const std::string& path, const nlohmann::json& request,
                              Clock::time_point deadline);
  // etcd's auth token for the access's user (tokens expire: asked again when refused).
  Result<bool> authenticate(Clock::time_point deadline);

  // A connection of its own to a member (a watch's), with the token.
  Result<HttpConnection> open(const std::string& endpoint, Clock::time_point deadline) const;
  std::string endpoints_text() const;
  const std::vector<std::string>& endpoints() const { return endpoints_; }
  std::size_t current() const { return current_; }
  std::string local_address() const { return local_address_; }
  bool grpc() const { return grpc_; }
  std::chrono::milliseconds member_try() const { return member_try_; }
  // Another set of calls to the same cluster, with the same token, over a connection of its own.
  MemberCalls another() const;

 private:
  Result<std::unique_ptr<UnaryChannel>> open_unary(const std::string& endpoint,
                                                   Clock::time_point deadline);

  std::vector<std::string> endpoints_;  // host:port of each member
  Access access_;
  std::shared_ptr<TlsContext> tls_;
  bool grpc_ = false;  // through etcd's gRPC API (else the JSON gateway)
  std::size_t current_ = 0;
  std::chrono::milliseconds member_try_;
  std::string token_;
  std::unique_ptr<UnaryChannel> unary_;
  std::string local_address_;
  // A call found no member for its whole time: until one answers again, calls try briefly
  // (a job that lost etcd ends without waiting on it once per call).
  bool unreachable_ = false;
};

}  // namespace aml::etcd
