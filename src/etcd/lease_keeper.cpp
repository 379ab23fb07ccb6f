#include "etcd/lease_keeper.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "etcd/gateway_json.hpp"
#include "etcd/socket_wait.hpp"

namespace aml::etcd {

LeaseKeeper::LeaseKeeper(MemberCalls calls, std::string lease, std::chrono::milliseconds ttl)
    : calls_(std::move(calls)),
      lease_(std::move(lease)),
      ttl_(ttl),
      stop_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      last_renewed_(Clock::now()) {
  thread_.emplace([this] { keep(); },
                  [this] {
                    const std::uint64_t one = 1;
                    (void)!write(stop_.get(), &one, sizeof one);
                  });
}

LeaseKeeper::~LeaseKeeper() { thread_.reset(); }  // stops and joins before the rest goes

std::optional<Error> LeaseKeeper::ended() const {
  std::lock_guard lock(mutex_);
  return ended_;
}

Clock::time_point LeaseKeeper::last_renewed() const {
  std::lock_guard lock(mutex_);
  return last_renewed_;
}

std::optional<Error> LeaseKeeper::unanswered_for(std::chrono::milliseconds limit) const {
  std::lock_guard lock(mutex_);
  if (Clock::now() - last_renewed_ < limit || !last_failure_) return std::nullopt;
  return last_failure_;
}

void LeaseKeeper::keep() {
  wait_cancel_fd = stop_.get();  // the stop ends this thread's waits on etcd's sockets too
  Clock::time_point next = last_renewed() + ttl_ / 3;
  for (;;) {
    pollfd stop{stop_.get(), POLLIN, 0};
    if (poll(&stop, 1, ms_until(next)) > 0) return;
    auto answer = calls_.call("/v3/lease/keepalive", {{"ID", lease_}}, Clock::now() + ttl_);
    if (wait_cancelled()) return;
    std::lock_guard lock(mutex_);
    if (!answer) {  // no member answered in a TTL: again, after a breath
      last_failure_ = answer.error();
      next = Clock::now() + kMemberRetryPause;
      continue;
    }
    if (number_of(answer->value("result", nlohmann::json::object()), "TTL") <= 0) {
      ended_ = invalid("etcd lease", lease_,
                       "a live lease; it expired: this launcher was silent for over "
                       "--node-timeout (a pause, a cut-off) and the job counted it lost");
      return;
    }
    last_failure_.reset();
    last_renewed_ = Clock::now();
    next = last_renewed_ + ttl_ / 3;
  }
}

}  // namespace aml::etcd
