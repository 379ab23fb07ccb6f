#include "etcd/etcd_rendezvous.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>

#include "etcd/base64.hpp"

namespace aml::etcd {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr milliseconds kShortestReply{1500};
// A wait looks at its lease and at the wills of the lost this often at least.
constexpr milliseconds kLongestStep{500};

std::string text_of(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

long long number_of(const json& j, const char* name) {
  return std::atoll(text_of(j, name).c_str());
}

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

EtcdRendezvous::EtcdRendezvous(std::shared_ptr<EtcdSession> session)
    : session_(std::move(session)),
      will_key_(std::string(EtcdSession::kWills) + session_->lease() + "-" +
                std::to_string(session_->next_serial())),
      ready_fd_(epoll_create1(EPOLL_CLOEXEC)) {}

void EtcdRendezvous::watch_on(HttpConnection connection) {
  if (watch_) epoll_ctl(ready_fd_.get(), EPOLL_CTL_DEL, watch_->fd(), nullptr);
  watch_.emplace(std::move(connection));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = watch_->fd();
  epoll_ctl(ready_fd_.get(), EPOLL_CTL_ADD, watch_->fd(), &event);
}

Clock::time_point EtcdRendezvous::reply_deadline() const {
  const milliseconds wait = reply_timeout_.count() > 0 ? reply_timeout_ : session_->lease_ttl();
  return Clock::now() + std::max(kShortestReply, wait);
}

Result<json> EtcdRendezvous::call(const std::string& path, const json& request) {
  batch_absent_.clear();  // good for the call right after the batch alone
  const auto deadline = reply_deadline();
  if (auto tended = session_->tend(deadline); !tended) return tended.error();
  return session_->call(path, request, deadline);
}

Result<bool> EtcdRendezvous::set(std::string_view key, std::string_view value) {
  auto put = call("/v3/kv/put",
                  {{"key", to_base64(session_->full_key(key))}, {"value", to_base64(value)}});
  if (!put) return put.error();
  return true;
}

Result<std::vector<std::optional<std::string>>> EtcdRendezvous::batch(
    const std::vector<BatchOp>& ops) {
  json success = json::array();
  for (const BatchOp& op : ops) {
    const std::string key = to_base64(session_->full_key(op.key));
    switch (op.kind) {
      case BatchOp::Kind::set:
        success.push_back({{"request_put", {{"key", key}, {"value", to_base64(op.value)}}}});
        break;
      case BatchOp::Kind::get:
        success.push_back({{"request_range", {{"key", key}}}});
        break;
      case BatchOp::Kind::add:  // as add(key, 1): the version before, in the answer
        success.push_back(
            {{"request_put", {{"key", key}, {"value", to_base64("+")}, {"prev_kv", true}}}});
        break;
      case BatchOp::Kind::last_will:
        success.push_back({{"request_put", will_put(op.key, op.value)}});
        break;
    }
  }
  auto answer = call("/v3/kv/txn", {{"success", success}});
  if (!answer) return answer.error();
  const json responses = answer->value("responses", json::array());
  if (!answer->value("succeeded", false) || responses.size() != ops.size()) {
    return invalid("etcd", session_->endpoints_text(),
                   "an answer for each of a transaction's " + std::to_string(ops.size()) +
                       " operations (got " + answer->dump().substr(0, 200) + ")");
  }
  std::vector<std::optional<std::string>> results(ops.size());
  batch_absent_.clear();
  batch_revision_ = number_of(answer->value("header", json::object()), "revision");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    switch (ops[i].kind) {
      case BatchOp::Kind::set:
        break;
      case BatchOp::Kind::get: {
        const json range = responses[i].value("response_range", json::object());
        for (const json& kv : range.value("kvs", json::array())) {
          results[i] = from_base64(text_of(kv, "value")).value_or("");
        }
        if (!results[i]) batch_absent_.insert(ops[i].key);
        break;
      }
      case BatchOp::Kind::add: {
        const json put = responses[i].value("response_put", json::object());
        const auto previous = put.find("prev_kv");
        results[i] =
            std::to_string((previous == put.end() ? 0 : number_of(*previous, "version")) + 1);
        break;
      }
      case BatchOp::Kind::last_will:
        will_set_ = true;
        break;
    }
  }
  return results;
}

Result<bool> EtcdRendezvous::set_many(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  constexpr std::size_t kOpsPerTxn = 128;
  for (std::size_t first = 0; first < pairs.size(); first += kOpsPerTxn) {
    json puts = json::array();
    for (std::size_t i = first; i < pairs.size() && i < first + kOpsPerTxn; ++i) {
      puts.push_back({{"request_put",
                       {{"key", to_base64(session_->full_key(pairs[i].first))},
                        {"value", to_base64(pairs[i].second)}}}});
    }
    auto done = call("/v3/kv/txn", {{"success", puts}});
    if (!done) return done.error();
  }
  return true;
}

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
  if (timeout.count() > 0 && keys.size() == 1 && batch_absent_.erase(keys.front()) > 0) {
    revision = batch_revision_;  // absent there: whatever came since, the watch brings
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

Result<std::int64_t> EtcdRendezvous::add(std::string_view key, std::int64_t delta) {
  const std::string full = to_base64(session_->full_key(key));
  if (delta == 0) {
    auto answer = call("/v3/kv/range", {{"key", full}});
    if (!answer) return answer.error();
    const json kvs = answer->value("kvs", json::array());
    return kvs.empty() ? 0 : number_of(kvs.front(), "version");
  }
  if (delta != 1) return invalid("etcd count", std::string(key), "a step of 0 or 1");
  // Each put of a key makes its version one more, and the answer holds the version before:
  // every caller gets its own number.
  auto answer = call("/v3/kv/put", {{"key", full}, {"value", to_base64("+")}, {"prev_kv", true}});
  if (!answer) return answer.error();
  const auto previous = answer->find("prev_kv");
  return (previous == answer->end() ? 0 : number_of(*previous, "version")) + 1;
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

Result<bool> EtcdRendezvous::erase(std::string_view key) {
  auto answer = call("/v3/kv/deleterange", {{"key", to_base64(session_->full_key(key))}});
  if (!answer) return answer.error();
  return number_of(*answer, "deleted") > 0;
}

Result<std::string> EtcdRendezvous::transaction(std::string_view key, std::string_view expected,
                                                std::string_view desired, bool leased) {
  const std::string full = to_base64(session_->full_key(key));
  json compare = {{"key", full}, {"result", "EQUAL"}};
  if (expected.empty()) {
    compare["target"] = "CREATE";
    compare["create_revision"] = "0";
  } else {
    compare["target"] = "VALUE";
    compare["value"] = to_base64(expected);
  }
  json put = {{"key", full}, {"value", to_base64(desired)}};
  if (leased) put["lease"] = session_->lease();
  auto answer =
      call("/v3/kv/txn", {{"compare", json::array({compare})},
                          {"success", json::array({{{"request_put", put}}})},
                          {"failure", json::array({{{"request_range", {{"key", full}}}}})}});
  if (!answer) return answer.error();
  if (answer->value("succeeded", false)) return std::string(desired);
  for (const json& response : answer->value("responses", json::array())) {
    const json range = response.value("response_range", json::object());
    for (const json& kv : range.value("kvs", json::array())) {
      return from_base64(text_of(kv, "value")).value_or("");
    }
  }
  return std::string();
}

Result<std::string> EtcdRendezvous::compare_set(std::string_view key, std::string_view expected,
                                                std::string_view desired) {
  return transaction(key, expected, desired, false);
}

Result<std::string> EtcdRendezvous::claim(std::string_view key, std::string_view value) {
  return transaction(key, "", value, true);
}

json EtcdRendezvous::will_put(std::string_view key, std::string_view value) const {
  const std::string will = json{{"key", key}, {"value", value}}.dump();
  return {{"key", to_base64(session_->full_key(will_key_))},
          {"value", to_base64(will)},
          {"lease", session_->lease()}};
}

Result<bool> EtcdRendezvous::set_last_will(std::string_view key, std::string_view value) {
  auto put = call("/v3/kv/put", will_put(key, value));
  if (!put) return put.error();
  will_set_ = true;
  return true;
}

Result<bool> EtcdRendezvous::clear_last_will() {
  if (!will_set_) return true;
  // Kept, but emptied: its deletion with the lease must not fire it.
  auto put = call("/v3/kv/put", {{"key", to_base64(session_->full_key(will_key_))},
                                 {"value", to_base64(EtcdSession::kClearedWill)},
                                 {"lease", session_->lease()}});
  if (!put) return put.error();
  will_set_ = false;
  return true;
}

Result<std::vector<std::string>> EtcdRendezvous::silent(milliseconds) {
  if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  return std::vector<std::string>();
}

// The lease is renewed a third of its time before it ends, not at every heartbeat: a
// thousand launchers beating five times a second would be etcd's whole load.
Result<bool> EtcdRendezvous::heartbeat() {
  const bool due = Clock::now() >= session_->next_keep_alive();
  if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  return due;  // etcd answered just now
}

Result<bool> EtcdRendezvous::start_get(std::string_view key, milliseconds) {
  auto answer = call("/v3/kv/range", {{"key", to_base64(session_->full_key(key))},
                                      {"serializable", true}});  // watched from its revision
  if (!answer) return answer.error();
  const json kvs = answer->value("kvs", json::array());
  // From the key's last change where it exists: the watch's first event is its value.
  watched_from_ = kvs.empty() ? number_of(answer->value("header", json::object()), "revision") + 1
                              : number_of(kvs.front(), "mod_revision");
  watched_ = std::string(key);
  auto watching = session_->watch(watched_, "", watched_from_, false, reply_deadline());
  if (!watching) return watching.error();
  watch_on(std::move(*watching));
  return true;
}

Result<std::optional<std::string>> EtcdRendezvous::finish_get() {
  if (!watch_) return invalid("etcd", session_->endpoints_text(), "a watch begun by start_get");
  if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  for (;;) {
    auto message = watch_->next_message(Clock::now());
    if (!message) {
      // Its member was lost: watch on another from the first revision not seen.
      epoll_ctl(ready_fd_.get(), EPOLL_CTL_DEL, watch_->fd(), nullptr);
      watch_.reset();
      auto reopened = session_->watch(watched_, "", watched_from_, false, reply_deadline());
      if (!reopened) return reopened.error();
      watch_on(std::move(*reopened));
      return std::optional<std::string>();
    }
    if (!*message) return std::optional<std::string>();
    auto events = session_->events_of(**message);
    if (!events) return events.error();
    for (const WatchEvent& event : *events) {
      watched_from_ = std::max(watched_from_, event.revision + 1);
      if (event.put && event.key == watched_) return std::optional<std::string>(event.value);
    }
  }
}

}  // namespace aml::etcd
