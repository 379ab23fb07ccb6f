#include "etcd/stream_member_check.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <utility>

#include "etcd/base64.hpp"
#include "etcd/socket_wait.hpp"

namespace aml::etcd {

StreamMemberCheck::StreamMemberCheck(MemberCalls calls, std::string key,
                                     std::chrono::milliseconds every)
    : calls_(std::move(calls)),
      key_(std::move(key)),
      every_(every),
      stop_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_.emplace([this] { run(); },
                  [this] {
                    const std::uint64_t one = 1;
                    (void)!write(stop_.get(), &one, sizeof one);
                  });
}

StreamMemberCheck::~StreamMemberCheck() { thread_.reset(); }  // stops and joins first

void StreamMemberCheck::ask(std::size_t member) {
  std::lock_guard lock(mutex_);
  member_ = member;
  moved_to_.reset();  // a verdict on the member before is no news any more
}

std::optional<std::size_t> StreamMemberCheck::moved_to() {
  std::lock_guard lock(mutex_);
  return std::exchange(moved_to_, std::nullopt);
}

void StreamMemberCheck::run() {
  wait_cancel_fd = stop_.get();  // the stop ends this thread's waits on etcd's sockets too
  for (;;) {
    pollfd stop{stop_.get(), POLLIN, 0};
    if (poll(&stop, 1, static_cast<int>(every_.count())) > 0) return;
    std::optional<std::size_t> asked;
    {
      std::lock_guard lock(mutex_);
      asked = member_;
    }
    if (!asked) continue;
    const auto to = one_that_serves(*asked);
    if (wait_cancelled()) return;
    std::lock_guard lock(mutex_);
    if (to && member_ == asked) moved_to_ = to;
  }
}

// nullopt where the member asked serves, or where none does; else the next one that serves.
std::optional<std::size_t> StreamMemberCheck::one_that_serves(std::size_t asked) {
  const auto& endpoints = calls_.endpoints();
  if (serves(endpoints[asked])) return std::nullopt;
  for (std::size_t i = 1; i < endpoints.size() && !wait_cancelled(); ++i) {
    const std::size_t member = (asked + i) % endpoints.size();
    if (serves(endpoints[member])) return member;
  }
  return std::nullopt;
}

bool StreamMemberCheck::serves(const std::string& endpoint) {
  const auto deadline = Clock::now() + calls_.member_try();
  if (!connection_ || connected_to_ != endpoint) {
    connection_.reset();
    auto opened = calls_.open(endpoint, deadline);
    if (!opened) return false;
    connection_.emplace(std::move(*opened));
    connected_to_ = endpoint;
  }
  // Linearizable (no "serializable"): a member answers it only with a leader and its quorum.
  auto answer = connection_->unary("/v3/kv/range", {{"key", to_base64(key_)}, {"count_only", true}},
                                   deadline);
  // An answer of its own is service, a refusal too (an auth token expired: the launcher's calls
  // ask again); 5xx is gRPC's unavailable (no leader, stopping).
  if (answer && answer->status < 500) return true;
  connection_.reset();
  return false;
}

}  // namespace aml::etcd
