// A launcher's etcd lease kept alive on a thread of its own, over a connection of its own
// (DESIGN §5): nothing else the launcher does holds it up (a restart's workers slow to leave,
// a long call, a starved main loop), as etcd's own client keeps a lease on a goroutine of its
// own. It renews every third of the TTL and, while no member answers, tries them in turn again
// and again: only etcd can say the lease is gone (a new leader gives every lease its whole TTL
// again, so a renewal late by this launcher's clock may still be in time). The session decides
// when a silence of etcd is etcd's loss (unanswered_for).
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "etcd/member_calls.hpp"
#include "util/service_thread.hpp"
#include "util/unique_fd.hpp"

namespace aml::etcd {

class LeaseKeeper {
 public:
  // Keeps `lease`, granted or renewed just now, alive through `calls`, its own.
  LeaseKeeper(MemberCalls calls, std::string lease, std::chrono::milliseconds ttl);
  ~LeaseKeeper();  // stops at once, a call under way cut short
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // nullopt while the lease is kept; else why it ended (etcd said it expired).
  std::optional<Error> ended() const;
  Clock::time_point last_renewed() const;
  // The last attempt's error, where no renewal came for `limit`; else nullopt.
  std::optional<Error> unanswered_for(std::chrono::milliseconds limit) const;

 private:
  void keep();

  MemberCalls calls_;
  const std::string lease_;
  const std::chrono::milliseconds ttl_;
  UniqueFd stop_;  // an eventfd: written to stop the thread, which also ends its waits
  mutable std::mutex mutex_;
  std::optional<Error> ended_;
  std::optional<Error> last_failure_;  // since the last renewal
  Clock::time_point last_renewed_;
  std::optional<ServiceThread> thread_;  // last: it starts once the rest is there
};

}  // namespace aml::etcd
