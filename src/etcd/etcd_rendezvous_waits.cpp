// The waits of the rendezvous in etcd: each a read, then a watch from the revision read (or
// from the revision of the batch that just found the key absent), on whichever member
// answers; a lost member's watch is opened again on another from where it was. start_get's
// stream, which may follow several keys, is in etcd_round_watch.cpp.
#include <sys/epoll.h>

#include <algorithm>
#include <map>

#include "etcd/base64.hpp"
#include "etcd/etcd_rendezvous.hpp"
#include "etcd/gateway_json.hpp"

namespace aml::etcd {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

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
  std::size_t epoch = session_->stream_epoch();
  while (missing() > 0 && Clock::now() < deadline) {
    const auto step = std::min({deadline, session_->next_tending(), Clock::now() + kLongestStep});
    // A stream on a member that stopped serving (its epoch past) is not read: it says nothing.
    const bool moved = epoch != session_->stream_epoch();
    auto message =
        moved ? Result<std::optional<std::string>>(std::nullopt) : watching->next_message(step);
    if (moved || !message) {
      // Its member was lost, or stopped serving: read again and watch on another from there.
      auto again = read(keys, revision, true);
      if (!again) return again.error();
      values = std::move(again);
      auto reopened = session_->watch(from, to, revision + 1, false, reply_deadline());
      if (!reopened) return reopened.error();
      watching = std::move(reopened);
      epoch = session_->stream_epoch();
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
  // A key that start_get's stream follows (or would) waits there (etcd_round_watch.cpp).
  if (covered_.contains(std::string(key)) || (!watch_ && !followed_.empty())) {
    return wait_on_stream(std::string(key), Clock::now() + timeout);
  }
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

// Reads the count and watches it: from its creation, so that every put's value (what each
// counter brought) comes as an event, or from the revision read.
Result<bool> EtcdRendezvous::watch_count(std::string_view count_key, bool from_creation) {
  count_watch_.reset();
  if (count_key_ != count_key) {
    brought_.clear();
    history_lost_ = 0;
  }
  auto answer = call("/v3/kv/range", {{"key", to_base64(session_->full_key(count_key))},
                                      {"serializable", true}});  // watched from its revision
  if (!answer) return answer.error();
  const json kvs = answer->value("kvs", json::array());
  count_ = kvs.empty() ? 0 : number_of(kvs.front(), "version");
  count_revision_ = number_of(answer->value("header", json::object()), "revision");
  const long long from = from_creation && !kvs.empty() ? number_of(kvs.front(), "create_revision")
                                                       : count_revision_ + 1;
  if (!from_creation) history_lost_ = std::max<std::int64_t>(history_lost_, count_);
  auto watching = session_->watch(std::string(count_key), "", from, false, reply_deadline());
  if (!watching) return watching.error();
  count_watch_.emplace(std::move(*watching));
  count_epoch_ = session_->stream_epoch();
  count_key_ = std::string(count_key);
  return true;
}

Result<bool> EtcdRendezvous::next_count_message(Clock::time_point deadline) {
  // Its member stopped serving: the count on the streams' member (etcd_stream_member.cpp).
  if (count_epoch_ != session_->stream_epoch()) return watch_count(count_key_);
  auto message = count_watch_->next_message(deadline);
  if (!message) return watch_count(count_key_);  // its member was lost: watch on another
  if (!*message) return false;
  auto events = session_->events_of(**message);
  if (!events) {
    // The count's history is gone (etcd compacted it): what came before now cannot be read
    // (those counters are told they came late); from here on, as it comes.
    if (history_lost_ < count_) return watch_count(count_key_, false);
    return events.error();
  }
  for (const WatchEvent& event : *events) {
    if (event.key != count_key_) continue;
    if (event.put) brought_[event.version] = event.value;
    if (event.revision <= count_revision_) continue;  // history: the count read is newer
    count_revision_ = event.revision;
    count_ = event.put ? event.version : 0;
  }
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
            : std::min({deadline, session_->next_tending(), Clock::now() + kLongestStep});
    auto read = next_count_message(step);
    if (!read) return read.error();
    if (*read) continue;
    if (count_ > above || Clock::now() >= deadline) return count_;
    if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  }
}

Result<std::vector<std::optional<std::string>>> EtcdRendezvous::arrivals(std::string_view count_key,
                                                                         std::int64_t from,
                                                                         std::int64_t to,
                                                                         milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  if (!count_watch_ || count_key_ != count_key) {
    if (auto watching = watch_count(count_key); !watching) return watching.error();
  }
  // Counter k's put is the count's version k + 1.
  auto all_there = [&] {
    for (std::int64_t version = from + 1; version <= to; ++version) {
      if (version > history_lost_ && !brought_.contains(version)) return false;
    }
    return true;
  };
  while (!all_there()) {
    const auto step = std::min({deadline, session_->next_tending(), Clock::now() + kLongestStep});
    auto read = next_count_message(step);
    if (!read) return read.error();
    if (!*read && Clock::now() >= deadline) break;
    if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  }
  std::vector<std::optional<std::string>> values;
  for (std::int64_t version = from + 1; version <= to; ++version) {
    auto found = brought_.find(version);
    values.push_back(found == brought_.end() ? std::nullopt
                                             : std::optional<std::string>(found->second));
  }
  return values;
}

}  // namespace aml::etcd
