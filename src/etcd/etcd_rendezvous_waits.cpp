// The waits of the rendezvous in etcd: each a read, then a watch from the revision read (or
// from the revision of the batch that just found the key absent), on whichever member
// answers; a lost member's watch is opened again on another from where it was. start_get's
// watch may carry a second key (follow_beside: a round's verdict beside its abort).
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "etcd/base64.hpp"
#include "etcd/etcd_rendezvous.hpp"
#include "etcd/gateway_json.hpp"

namespace aml::etcd {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// A wait looks at its lease and at the wills of the lost this often at least.
constexpr milliseconds kLongestStep{500};

std::string common_prefix(const std::vector<std::string>& keys) {
  std::string prefix = keys.front();
  for (const std::string& key : keys) {
    std::size_t same = 0;
    while (same < prefix.size() && same < key.size() && prefix[same] == key[same]) ++same;
    prefix.resize(same);
  }
  return prefix;
}

}  // namespace

// A read that a watch from its revision follows may come from a member a little behind (a
// serializable read: no round to the leader, a third cheaper): whatever it missed, the watch
// brings. Alone, a read must be linearizable.
Result<std::vector<std::optional<std::string>>> EtcdRendezvous::read(
    const std::vector<std::string>& keys, long long& revision, bool then_watched) {
  std::vector<std::optional<std::string>> values(keys.size());
  if (keys.empty()) return values;
  json range;
  if (keys.size() == 1) {
    range = {{"key", to_base64(session_->full_key(keys.front()))}};
  } else {
    const std::string prefix = session_->full_key(common_prefix(keys));
    range = {{"key", to_base64(prefix)}, {"range_end", to_base64(prefix_end(prefix))}};
  }
  if (then_watched) range["serializable"] = true;
  auto answer = call("/v3/kv/range", range);
  if (!answer) return answer.error();
  revision = number_of(answer->value("header", json::object()), "revision");
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < keys.size(); ++i) index[session_->full_key(keys[i])] = i;
  for (const json& kv : answer->value("kvs", json::array())) {
    auto key = from_base64(text_of(kv, "key"));
    if (!key) continue;
    if (auto found = index.find(*key); found != index.end()) {
      values[found->second] = from_base64(text_of(kv, "value")).value_or("");
    }
  }
  return values;
}

Result<std::vector<std::optional<std::string>>> EtcdRendezvous::get_all(
    const std::vector<std::string>& keys, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  long long revision = 0;
  Result<std::vector<std::optional<std::string>>> values =
      std::vector<std::optional<std::string>>(1);
  const auto absent =
      timeout.count() > 0 && keys.size() == 1 ? session_->absent_since(keys.front()) : std::nullopt;
  if (absent) {
    revision = *absent;  // absent there: whatever came since, the watch brings
  } else {
    values = read(keys, revision, timeout.count() > 0);
  }
  if (!values || timeout.count() <= 0) return values;
  auto missing = [&values] {
    return std::count_if(values->begin(), values->end(), [](const auto& v) { return !v; });
  };
  if (missing() == 0) return values;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < keys.size(); ++i) index[keys[i]] = i;
  const std::string from = keys.size() == 1 ? keys.front() : common_prefix(keys);
  const std::string to = keys.size() == 1 ? "" : prefix_end(from);
  auto watching = session_->watch(from, to, revision + 1, false, reply_deadline());
  if (!watching) return watching.error();
  while (missing() > 0 && Clock::now() < deadline) {
    const auto step =
        std::min({deadline, session_->next_keep_alive(), Clock::now() + kLongestStep});
    auto message = watching->next_message(step);
    if (!message) {
      // Its member was lost: read again and watch on another from there.
      auto again = read(keys, revision, true);
      if (!again) return again.error();
      values = std::move(again);
      auto reopened = session_->watch(from, to, revision + 1, false, reply_deadline());
      if (!reopened) return reopened.error();
      watching = std::move(reopened);
      continue;
    }
    if (*message) {
      auto events = session_->events_of(**message);
      if (!events) return events.error();
      for (const WatchEvent& event : *events) {
        revision = std::max(revision, event.revision);
        auto found = index.find(event.key);
        if (found == index.end()) continue;
        if (event.put) {
          (*values)[found->second] = event.value;
        } else {
          (*values)[found->second].reset();
        }
      }
    }
    if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  }
  return values;
}

Result<std::optional<std::string>> EtcdRendezvous::get(std::string_view key, milliseconds timeout) {
  if (watch_ && !beside_.empty() && key == beside_) return wait_beside(Clock::now() + timeout);
  auto values = get_all({std::string(key)}, timeout);
  if (!values) return values.error();
  return values->front();
}

Result<bool> EtcdRendezvous::check(const std::vector<std::string>& keys) {
  return wait(keys, milliseconds(0));
}

Result<bool> EtcdRendezvous::wait(const std::vector<std::string>& keys, milliseconds timeout) {
  auto values = get_all(keys, timeout);
  if (!values) return values.error();
  return std::all_of(values->begin(), values->end(), [](const auto& v) { return v.has_value(); });
}

// Reads the count and watches it from there on.
Result<bool> EtcdRendezvous::watch_count(std::string_view count_key) {
  count_watch_.reset();
  auto answer = call("/v3/kv/range", {{"key", to_base64(session_->full_key(count_key))},
                                      {"serializable", true}});  // watched from its revision
  if (!answer) return answer.error();
  const json kvs = answer->value("kvs", json::array());
  count_ = kvs.empty() ? 0 : number_of(kvs.front(), "version");
  count_revision_ = number_of(answer->value("header", json::object()), "revision");
  auto watching =
      session_->watch(std::string(count_key), "", count_revision_ + 1, false, reply_deadline());
  if (!watching) return watching.error();
  count_watch_.emplace(std::move(*watching));
  count_key_ = std::string(count_key);
  return true;
}

Result<std::int64_t> EtcdRendezvous::wait_count(std::string_view count_key, std::int64_t above,
                                                std::string_view, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  if (!count_watch_ || count_key_ != count_key) {
    if (auto watching = watch_count(count_key); !watching) return watching.error();
  }
  for (;;) {
    // What has come is read without waiting; then, below the count asked for, until the
    // deadline (tending the lease on the way).
    const auto step =
        count_ > above
            ? Clock::now()
            : std::min({deadline, session_->next_keep_alive(), Clock::now() + kLongestStep});
    auto message = count_watch_->next_message(step);
    if (!message) {  // its member was lost: read again and watch on another
      if (auto watching = watch_count(count_key); !watching) return watching.error();
      continue;
    }
    if (*message) {
      auto events = session_->events_of(**message);
      if (!events) return events.error();
      for (const WatchEvent& event : *events) {
        if (event.key != count_key_ || event.revision <= count_revision_) continue;
        count_revision_ = event.revision;
        count_ = event.put ? event.version : 0;
      }
      continue;
    }
    if (count_ > above || Clock::now() >= deadline) return count_;
    if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  }
}

void EtcdRendezvous::watch_on(HttpConnection connection) {
  if (watch_) epoll_ctl(ready_fd_.get(), EPOLL_CTL_DEL, watch_->fd(), nullptr);
  watch_.emplace(std::move(connection));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = watch_->fd();
  epoll_ctl(ready_fd_.get(), EPOLL_CTL_ADD, watch_->fd(), &event);
}

bool EtcdRendezvous::follow_beside(std::string_view beside) {
  beside_ = std::string(beside);
  beside_value_.reset();
  return true;
}

Result<bool> EtcdRendezvous::start_get(std::string_view key, milliseconds) {
  watched_ = std::string(key);
  held_.reset();
  if (auto absent = session_->absent_since(watched_)) {
    watched_from_ = *absent + 1;  // a batch found it absent there
  } else if (auto read = start_from(); !read) {
    return read.error();
  }
  // The key beside goes on the same watch where a batch found it absent too (from the lower of
  // the two revisions: an event before a key's own start is its value all the same).
  if (!beside_.empty()) {
    if (auto absent = session_->absent_since(beside_)) {
      watched_from_ = std::min(watched_from_, *absent + 1);
    } else {
      beside_.clear();
    }
  }
  auto watching = session_->watch(watched_, "", watched_from_, false, reply_deadline(), beside_);
  if (!watching) return watching.error();
  watch_on(std::move(*watching));
  return true;
}

Result<bool> EtcdRendezvous::start_from() {
  auto answer = call("/v3/kv/range", {{"key", to_base64(session_->full_key(watched_))},
                                      {"serializable", true}});  // watched from its revision
  if (!answer) return answer.error();
  const json kvs = answer->value("kvs", json::array());
  // From the key's last change where it exists: the watch's first event is its value.
  watched_from_ = kvs.empty() ? number_of(answer->value("header", json::object()), "revision") + 1
                              : number_of(kvs.front(), "mod_revision");
  return true;
}

Result<bool> EtcdRendezvous::rewatch() {
  epoll_ctl(ready_fd_.get(), EPOLL_CTL_DEL, watch_->fd(), nullptr);
  watch_.reset();
  auto reopened = session_->watch(watched_, "", watched_from_, false, reply_deadline(), beside_);
  if (!reopened) return reopened.error();
  watch_on(std::move(*reopened));
  return true;
}

Result<std::optional<std::string>> EtcdRendezvous::next_of_watch(Clock::time_point until,
                                                                 bool& read_one) {
  read_one = false;
  auto message = watch_->next_message(until);
  if (!message) {
    // Its member was lost: watch on another from the first revision not seen.
    if (auto again = rewatch(); !again) return again.error();
    return std::optional<std::string>();
  }
  if (!*message) return std::optional<std::string>();
  read_one = true;
  auto events = session_->events_of(**message);
  if (!events) return events.error();
  std::optional<std::string> value;
  for (const WatchEvent& event : *events) {
    watched_from_ = std::max(watched_from_, event.revision + 1);
    if (!event.put) continue;
    if (event.key == watched_ && !value) value = event.value;
    if (!beside_.empty() && event.key == beside_) beside_value_ = event.value;
  }
  return value;
}

Result<std::optional<std::string>> EtcdRendezvous::finish_get() {
  if (!watch_) return invalid("etcd", session_->endpoints_text(), "a watch begun by start_get");
  if (held_) {
    std::uint64_t drained = 0;
    (void)!::read(held_fd_.get(), &drained, sizeof drained);
    return std::exchange(held_, std::nullopt);
  }
  if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  for (;;) {
    bool read_one = false;
    auto value = next_of_watch(Clock::now(), read_one);
    if (!value || *value || !read_one) return value;
  }
}

// get(beside) on start_get's watch: start_get's value, should it come first, is held for
// finish_get (and fd() made readable for it).
Result<std::optional<std::string>> EtcdRendezvous::wait_beside(Clock::time_point deadline) {
  while (!beside_value_ && Clock::now() < deadline) {
    const auto step =
        std::min({deadline, session_->next_keep_alive(), Clock::now() + kLongestStep});
    bool read_one = false;
    auto value = next_of_watch(step, read_one);
    if (!value) return value.error();
    if (*value && !held_) {
      held_ = std::move(*value);
      const std::uint64_t one = 1;
      (void)!::write(held_fd_.get(), &one, sizeof one);
    }
    if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  }
  return beside_value_;
}

}  // namespace aml::etcd
