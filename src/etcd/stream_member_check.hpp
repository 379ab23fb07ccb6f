// Whether the member a launcher's watches stream from still serves, asked on a thread of its
// own (etcd_stream_member.cpp says why it is asked): the launcher's event loop never waits on a
// member that does not answer. Every `every`, a linearizable read on that member, over a
// connection of its own. Where it gives no answer within a member's try (or says it has no
// leader), the other members are asked in turn, and the first that serves is reported, once: the
// streams move there. Where none serves (this launcher is cut off), nothing is reported: a move
// would not help, and the event loop would wait on members that do not answer.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "etcd/http_connection.hpp"
#include "etcd/member_calls.hpp"
#include "util/service_thread.hpp"
#include "util/unique_fd.hpp"

namespace aml::etcd {

class StreamMemberCheck {
 public:
  // key: what the read asks for (any key: its count is not looked at).
  StreamMemberCheck(MemberCalls calls, std::string key, std::chrono::milliseconds every);
  ~StreamMemberCheck();  // stops at once, a read under way cut short
  StreamMemberCheck(const StreamMemberCheck&) = delete;
  StreamMemberCheck& operator=(const StreamMemberCheck&) = delete;

  // The member to ask from now on (its index in calls' endpoints).
  void ask(std::size_t member);
  // The member to move the streams to, where the one asked stopped serving; once.
  std::optional<std::size_t> moved_to();

 private:
  void run();
  std::optional<std::size_t> one_that_serves(std::size_t asked);
  bool serves(const std::string& endpoint);

  MemberCalls calls_;
  const std::string key_;
  const std::chrono::milliseconds every_;
  std::optional<HttpConnection> connection_;  // to the member last asked (the thread's own)
  std::string connected_to_;
  UniqueFd stop_;  // an eventfd: written to stop the thread, which also ends its waits
  std::mutex mutex_;
  std::optional<std::size_t> member_;    // the member to ask
  std::optional<std::size_t> moved_to_;  // where to move, not yet taken
  std::optional<ServiceThread> thread_;  // last: it starts once the rest is there
};

}  // namespace aml::etcd
