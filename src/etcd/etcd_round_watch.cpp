// start_get's watch in etcd: one stream for the keys a launcher waits on in a round (its seat,
// then the round's verdict and abort: follow_beside), opened once from the revision at which
// a batch found them all absent, so that a round costs a launcher one watch, not one per wait.
// The event loop registers one descriptor for the connection's life: an epoll set holding the
// stream's socket, and an eventfd for start_get's value when it came while get() waited.
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>

#include "etcd/base64.hpp"
#include "etcd/etcd_rendezvous.hpp"
#include "etcd/gateway_json.hpp"

namespace aml::etcd {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

}  // namespace

bool EtcdRendezvous::follow_beside(std::string_view beside) {
  if (std::find(followed_.begin(), followed_.end(), beside) == followed_.end()) {
    followed_.emplace_back(beside);
  }
  return true;
}

void EtcdRendezvous::watch_on(HttpConnection connection) {
  if (watch_) epoll_ctl(ready_fd_.get(), EPOLL_CTL_DEL, watch_->fd(), nullptr);
  watch_.emplace(std::move(connection));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = watch_->fd();
  epoll_ctl(ready_fd_.get(), EPOLL_CTL_ADD, watch_->fd(), &event);
  // The read that took the watch's "created" may have taken what etcd sent right after it (an
  // event of its history, its cancel).
  flag_unread();
}

void EtcdRendezvous::flag_unread() {
  std::uint64_t drained = 0;
  (void)!::read(unread_fd_.get(), &drained, sizeof drained);
  if (watch_ && watch_->has_message()) {
    const std::uint64_t one = 1;
    (void)!::write(unread_fd_.get(), &one, sizeof one);
  }
}

// The stream for `first` and the keys followed beside it, from the lowest revision at which a
// batch found one absent (an event before a key's own start is its value all the same); a
// followed key no batch found absent is left to a wait of its own.
Result<bool> EtcdRendezvous::open_stream(const std::string& first) {
  covered_ = {first};
  if (auto absent = session_->absent_since(first)) {
    stream_from_ = *absent + 1;
  } else {
    auto answer = call("/v3/kv/range", {{"key", to_base64(session_->full_key(first))},
                                        {"serializable", true}});  // watched from its revision
    if (!answer) return answer.error();
    const json kvs = answer->value("kvs", json::array());
    // From the key's last change where it exists: the watch's first event is its value.
    stream_from_ = kvs.empty() ? number_of(answer->value("header", json::object()), "revision") + 1
                               : number_of(kvs.front(), "mod_revision");
  }
  for (const std::string& key : followed_) {
    if (covered_.contains(key)) continue;
    if (auto absent = session_->absent_since(key)) {
      stream_from_ = std::min(stream_from_, *absent + 1);
      covered_.insert(key);
    }
  }
  return rewatch();
}

Result<bool> EtcdRendezvous::rewatch() {
  if (watch_) epoll_ctl(ready_fd_.get(), EPOLL_CTL_DEL, watch_->fd(), nullptr);
  watch_.reset();
  std::vector<std::string> keys(covered_.begin(), covered_.end());
  auto opened = session_->watch(keys.front(), "", stream_from_, false, reply_deadline(),
                                {keys.begin() + 1, keys.end()});
  if (!opened) return opened.error();
  watch_on(std::move(*opened));
  watch_epoch_ = session_->stream_epoch();
  return true;
}

Result<bool> EtcdRendezvous::keep_streams() {
  if (!covered_.empty() && watch_epoch_ != session_->stream_epoch()) {
    if (auto again = rewatch(); !again) return again;
  }
  if (count_watch_ && count_epoch_ != session_->stream_epoch()) return watch_count(count_key_);
  return true;
}

void EtcdRendezvous::hold(std::string value) {
  if (held_) return;
  held_ = std::move(value);
  const std::uint64_t one = 1;
  (void)!::write(held_fd_.get(), &one, sizeof one);
}

std::optional<std::string> EtcdRendezvous::take_held() {
  if (!held_) return std::nullopt;
  std::uint64_t drained = 0;
  (void)!::read(held_fd_.get(), &drained, sizeof drained);
  return std::exchange(held_, std::nullopt);
}

Result<bool> EtcdRendezvous::start_get(std::string_view key, milliseconds) {
  watched_ = std::string(key);
  (void)take_held();
  if (!watch_ || !covered_.contains(watched_)) return open_stream(watched_);
  // Already followed: its value, if it came, is given at once.
  if (auto seen = seen_.find(watched_); seen != seen_.end()) hold(seen->second);
  return true;
}

Result<std::optional<std::string>> EtcdRendezvous::next_of_watch(Clock::time_point until,
                                                                 bool& read_one) {
  read_one = false;
  if (watch_epoch_ != session_->stream_epoch()) {
    // Its member stopped serving: the same keys on the streams' member, from where it was.
    if (auto again = rewatch(); !again) return again.error();
  }
  auto message = watch_->next_message(until);
  if (!message) {
    // Its member was lost: the same keys on another, from the first revision not seen.
    if (auto again = rewatch(); !again) return again.error();
    return std::optional<std::string>();
  }
  if (!*message) return std::optional<std::string>();
  read_one = true;
  auto events = session_->events_of(**message);
  if (!events) {
    // etcd ended the watch (canceled): the next start_get opens it again.
    epoll_ctl(ready_fd_.get(), EPOLL_CTL_DEL, watch_->fd(), nullptr);
    watch_.reset();
    return events.error();
  }
  std::optional<std::string> value;
  for (const WatchEvent& event : *events) {
    stream_from_ = std::max(stream_from_, event.revision + 1);
    if (!event.put || !covered_.contains(event.key) || seen_.contains(event.key)) continue;
    seen_[event.key] = event.value;
    if (event.key == watched_) value = event.value;
  }
  return value;
}

Result<std::optional<std::string>> EtcdRendezvous::finish_get() {
  auto heard = finish_get_now();
  flag_unread();  // what it left read but not given
  return heard;
}

Result<std::optional<std::string>> EtcdRendezvous::finish_get_now() {
  if (!watch_) return invalid("etcd", session_->endpoints_text(), "a watch begun by start_get");
  if (held_) return take_held();
  if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  for (;;) {
    bool read_one = false;
    auto value = next_of_watch(Clock::now(), read_one);
    if (!value || *value || !read_one) return value;
  }
}

// get() of a key on the stream: start_get's value, should it come meanwhile, is held for
// finish_get (and fd() made readable for it).
Result<std::optional<std::string>> EtcdRendezvous::wait_on_stream(const std::string& key,
                                                                  Clock::time_point deadline) {
  auto heard = wait_on_stream_now(key, deadline);
  flag_unread();  // what it left read but not given
  return heard;
}

Result<std::optional<std::string>> EtcdRendezvous::wait_on_stream_now(const std::string& key,
                                                                      Clock::time_point deadline) {
  if (!watch_) {
    if (auto opened = open_stream(key); !opened) return opened.error();
  }
  bool opened_again = false;
  while (!seen_.contains(key) && Clock::now() < deadline) {
    const auto step = std::min({deadline, session_->next_tending(), Clock::now() + kLongestStep});
    bool read_one = false;
    auto value = next_of_watch(step, read_one);
    if (!value && !watch_ && !opened_again) {
      // etcd ended the watch (its first revision compacted away: a watch opened long before,
      // as a launcher's for the next round is, moved to another member), or no member took
      // it again in time. Once more, from what etcd holds now.
      opened_again = true;
      if (auto opened = open_stream(key); !opened) return opened.error();
      continue;
    }
    if (!value) return value.error();
    if (*value) hold(std::move(**value));
    if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  }
  auto seen = seen_.find(key);
  return seen == seen_.end() ? std::nullopt : std::optional<std::string>(seen->second);
}

}  // namespace aml::etcd
