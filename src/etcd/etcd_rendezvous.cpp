// The rendezvous in etcd: its calls (puts, counts, transactions, batches) and its last will.
// The waits are in etcd_rendezvous_waits.cpp.
#include "etcd/etcd_rendezvous.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <algorithm>

#include "etcd/base64.hpp"
#include "etcd/gateway_json.hpp"

namespace aml::etcd {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr milliseconds kShortestReply{1500};

}  // namespace

EtcdRendezvous::EtcdRendezvous(std::shared_ptr<EtcdSession> session)
    : session_(std::move(session)),
      will_key_(std::string(EtcdSession::kWills) + session_->lease() + "-" +
                std::to_string(session_->next_serial())),
      lasting_will_key_(will_key_ + "-lasting"),
      ready_fd_(epoll_create1(EPOLL_CLOEXEC)),
      held_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      unread_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  for (const UniqueFd* fd : {&held_fd_, &unread_fd_}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd->get();
    epoll_ctl(ready_fd_.get(), EPOLL_CTL_ADD, fd->get(), &event);
  }
}

Clock::time_point EtcdRendezvous::reply_deadline() const {
  const milliseconds wait = reply_timeout_.count() > 0 ? reply_timeout_ : session_->lease_ttl();
  return Clock::now() + std::max(kShortestReply, wait);
}

Result<json> EtcdRendezvous::call(const std::string& path, const json& request) {
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
      case BatchOp::Kind::add:  // as add(key, 1): the version before, in the answer; the put's
                                // value is what the counter brings (arrivals)
        success.push_back({{"request_put",
                            {{"key", key},
                             {"value", to_base64(op.value.empty() ? "+" : op.value)},
                             {"prev_kv", true}}}});
        break;
      case BatchOp::Kind::last_will:
        success.push_back({{"request_put", will_put(will_key_, op.key, op.value)}});
        break;
      case BatchOp::Kind::lasting_will:
        success.push_back({{"request_put", will_put(lasting_will_key_, op.key, op.value)}});
        break;
      case BatchOp::Kind::create:   // a transaction of its own inside: put where absent
      case BatchOp::Kind::claim: {  // the same, the key under this launcher's lease
        json put = {{"key", key}, {"value", to_base64(op.value)}};
        if (op.kind == BatchOp::Kind::claim) put["lease"] = session_->lease();
        success.push_back({{"request_txn",
                            {{"compare", json::array({holds(key, "")})},
                             {"success", json::array({{{"request_put", put}}})},
                             {"failure", json::array({{{"request_range", {{"key", key}}}}})}}}});
        break;
      }
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
  std::vector<std::string> absent;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    switch (ops[i].kind) {
      case BatchOp::Kind::set:
        break;
      case BatchOp::Kind::get: {
        const json range = responses[i].value("response_range", json::object());
        for (const json& kv : range.value("kvs", json::array())) {
          results[i] = from_base64(text_of(kv, "value")).value_or("");
        }
        if (!results[i]) absent.push_back(ops[i].key);
        break;
      }
      case BatchOp::Kind::add: {
        const json put = responses[i].value("response_put", json::object());
        const auto previous = put.find("prev_kv");
        const long long count = (previous == put.end() ? 0 : number_of(*previous, "version")) + 1;
        results[i] = std::to_string(count);
        break;
      }
      case BatchOp::Kind::last_will:
        will_set_ = true;
        break;
      case BatchOp::Kind::lasting_will:
        lasting_will_set_ = true;
        break;
      case BatchOp::Kind::create:
      case BatchOp::Kind::claim: {
        const json txn = responses[i].value("response_txn", json::object());
        if (txn.value("succeeded", false)) {
          results[i] = ops[i].value;
          break;
        }
        for (const json& inner : txn.value("responses", json::array())) {
          const json range = inner.value("response_range", json::object());
          for (const json& kv : range.value("kvs", json::array())) {
            results[i] = from_base64(text_of(kv, "value")).value_or("");
          }
        }
        if (!results[i]) results[i] = std::string();  // deleted meanwhile: as compare_set says
        break;
      }
    }
  }
  session_->remember_absent(absent, number_of(answer->value("header", json::object()), "revision"));
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

Result<bool> EtcdRendezvous::erase(std::string_view key) {
  auto answer = call("/v3/kv/deleterange", {{"key", to_base64(session_->full_key(key))}});
  if (!answer) return answer.error();
  return number_of(*answer, "deleted") > 0;
}

Result<std::string> EtcdRendezvous::transaction(std::string_view key, std::string_view expected,
                                                std::string_view desired, bool leased) {
  const std::string full = to_base64(session_->full_key(key));
  const json compare = holds(full, expected);
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

json EtcdRendezvous::will_put(const std::string& will_key, std::string_view key,
                              std::string_view value) const {
  const std::string will = json{{"key", key}, {"value", value}}.dump();
  return {{"key", to_base64(session_->full_key(will_key))},
          {"value", to_base64(will)},
          {"lease", session_->lease()}};
}

// Kept, but emptied: its deletion with the lease must not fire it.
json EtcdRendezvous::cleared(const std::string& will_key) const {
  return {{"key", to_base64(session_->full_key(will_key))},
          {"value", to_base64(EtcdSession::kClearedWill)},
          {"lease", session_->lease()}};
}

Result<bool> EtcdRendezvous::set_last_will(std::string_view key, std::string_view value) {
  auto put = call("/v3/kv/put", will_put(will_key_, key, value));
  if (!put) return put.error();
  will_set_ = true;
  return true;
}

Result<bool> EtcdRendezvous::clear_last_will() {
  if (!will_set_) return true;
  auto put = call("/v3/kv/put", cleared(will_key_));
  if (!put) return put.error();
  will_set_ = false;
  return true;
}

// Both wills in one transaction.
Result<bool> EtcdRendezvous::clear_lasting_will() {
  json puts = json::array();
  if (will_set_) puts.push_back({{"request_put", cleared(will_key_)}});
  if (lasting_will_set_) puts.push_back({{"request_put", cleared(lasting_will_key_)}});
  if (puts.empty()) return true;
  auto done = call("/v3/kv/txn", {{"success", puts}});
  if (!done) return done.error();
  will_set_ = lasting_will_set_ = false;
  return true;
}

Result<std::vector<std::string>> EtcdRendezvous::silent(milliseconds) {
  if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  return std::vector<std::string>();
}

// The lease is renewed by its keeper every third of its time, not at every heartbeat: a
// thousand launchers beating five times a second would be etcd's whole load.
Result<bool> EtcdRendezvous::heartbeat() {
  if (auto tended = session_->tend(reply_deadline()); !tended) return tended.error();
  return session_->renewed_since_asked();  // etcd answered since the last beat
}

}  // namespace aml::etcd
