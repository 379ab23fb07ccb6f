// The last wills of launchers whose lease ended (DESIGN §5): a will is a leased key whose value
// says what to set; its deletion (the lease's end) is watched by a few launchers of the job,
// and the first to see it sets the key where absent.
#include <algorithm>

#include "etcd/base64.hpp"
#include "etcd/etcd_session.hpp"
#include "etcd/gateway_json.hpp"

namespace aml::etcd {

using nlohmann::json;

// From now on when it starts: the deletions it did not watch were the watchers' of then.
Result<bool> EtcdSession::watch_wills(bool on, Clock::time_point deadline) {
  wills_on_ = on;
  if (!on) {
    wills_.reset();
    wills_seen_ = 0;
    return true;
  }
  return wills_ ? Result<bool>(true) : open_will_watch(deadline);
}

Result<bool> EtcdSession::open_will_watch(Clock::time_point deadline, bool once_each) {
  auto watching = watch(kWills, prefix_end(std::string(kWills)), wills_seen_ ? wills_seen_ + 1 : 0,
                        true, deadline, {}, once_each);
  if (!watching) return watching.error();
  wills_.emplace(std::move(*watching));
  wills_epoch_ = stream_epoch_;
  return true;
}

// A will's key is deleted when its launcher's lease ends; its value (prev_kv) says what to
// set. Every launcher that sees it sets it where absent: the first one does, the rest find it.
// A read comes before the write: launchers tend their leases at times of their own, so most
// find the key set, and a thousand launchers do not make a thousand raft rounds of one will.
Result<bool> EtcdSession::fire_wills(Clock::time_point deadline) {
  // Its watch is opened again on each member once at most, within one member's try, not the
  // caller's deadline; where none took it, not again for as long: etcd is out of reach
  // meanwhile, and every tending says so at once. A running round's poll tends the session
  // before each call, and must not wait out an etcd that does not answer while its tripwire,
  // workers and signals wait (its grace counts from etcd's last answer).
  const auto reopen_until = std::min(deadline, Clock::now() + member_try());
  while (wills_on_) {
    // Its member stopped serving: it says nothing more. Again on the streams' member.
    if (wills_ && wills_epoch_ != stream_epoch_) wills_.reset();
    if (!wills_ && wills_unopened_ && Clock::now() < wills_unopened_->second)
      return wills_unopened_->first;
    if (!wills_) {
      auto again = open_will_watch(reopen_until, true);
      if (!again) {
        wills_unopened_.emplace(again.error(), Clock::now() + member_try());
        return again.error();
      }
      wills_unopened_.reset();
    }
    auto message = wills_->next_message(Clock::now());
    if (!message) {
      wills_.reset();  // its member was lost: watch again on another, from where it was
      continue;
    }
    if (!*message) return true;
    auto events = events_of(**message);
    if (!events) return events.error();
    for (const WatchEvent& event : *events) {
      wills_seen_ = std::max(wills_seen_, event.revision);
      if (event.put || event.previous.empty() || event.previous == kClearedWill) continue;
      auto will = json::parse(event.previous, nullptr, false);
      if (!will.is_object()) continue;
      const std::string key = to_base64(full_key(will.value("key", std::string())));
      auto present = call("/v3/kv/range", {{"key", key}, {"count_only", true}}, deadline);
      if (!present) return present.error();
      if (number_of(*present, "count") > 0) continue;
      json put = {{"key", key}, {"value", to_base64(will.value("value", std::string()))}};
      json txn = {{"compare", json::array({{{"key", key},
                                            {"target", "CREATE"},
                                            {"result", "EQUAL"},
                                            {"create_revision", "0"}}})},
                  {"success", json::array({{{"request_put", put}}})}};
      if (auto done = call("/v3/kv/txn", txn, deadline); !done) return done.error();
    }
  }
  return true;
}

// A launcher's wills are keys under its lease, its lasting one set with its first count in a
// round: a lease with none left ended (or was revoked at its launcher's end). Counted, not read,
// a transaction of up to 128 (etcd's --max-txn-ops) prefix ranges at a time.
Result<std::vector<long>> EtcdSession::lapsed(const std::vector<long>& leases,
                                              Clock::time_point deadline) {
  constexpr std::size_t kRangesPerTxn = 128;
  std::vector<long> ended;
  for (std::size_t first = 0; first < leases.size(); first += kRangesPerTxn) {
    const std::size_t last = std::min(leases.size(), first + kRangesPerTxn);
    json ranges = json::array();
    for (std::size_t i = first; i < last; ++i) {
      const std::string prefix = full_key(std::string(kWills) + std::to_string(leases[i]) + "-");
      ranges.push_back({{"request_range",
                         {{"key", to_base64(prefix)},
                          {"range_end", to_base64(prefix_end(prefix))},
                          {"count_only", true}}}});
    }
    auto answer = call("/v3/kv/txn", {{"success", ranges}}, deadline);
    if (!answer) return answer.error();
    const json responses = answer->value("responses", json::array());
    if (responses.size() != last - first) {
      return invalid("etcd", endpoints_text(),
                     "an answer for each of a transaction's " + std::to_string(last - first) +
                         " ranges (got " + answer->dump().substr(0, 200) + ")");
    }
    for (std::size_t i = first; i < last; ++i) {
      const json& range = responses[i - first].value("response_range", json::object());
      if (number_of(range, "count") == 0) ended.push_back(leases[i]);
    }
  }
  return ended;
}

}  // namespace aml::etcd
