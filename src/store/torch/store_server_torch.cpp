// The store server's second door: torch's TCPStore protocol (torch_wire.hpp), so that the
// workers' own store calls (init_process_group, Gloo's and NCCL's address exchange, barriers,
// a user's TCPStore) are served by the launcher over the same key-value core and waiter
// registry as the launchers' own. Replies as torch's servers give them, an unknown operation
// or a broken request closes that connection alone, as torch's libuv server does.
#include <charconv>

#include "store/core/store_connection.hpp"
#include "store/core/store_server.hpp"

namespace aml::store {
namespace {

constexpr std::uint32_t kNoTimeout = 0xffffffffu;  // torch's clients time their waits themselves

std::string u8_reply(std::uint8_t v) {
  std::string out;
  torch::put_u8(out, v);
  return out;
}

std::string i64_reply(std::int64_t v) {
  std::string out;
  torch::put_i64(out, v);
  return out;
}

std::string bytes_reply(std::string_view v) {
  std::string out;
  torch::put_bytes(out, v);
  return out;
}

}  // namespace

void StoreServer::process_torch(Connection& c) {
  if (speaks_relay(c)) return process_trunk(c);
  const std::uint64_t id = c.id;
  // Unlike the launchers' protocol, a torch client's requests go on while it waits (CANCEL_WAIT
  // comes that way): each is taken as it comes.
  while (!c.close_after_send && c.in_used < c.in.size()) {
    const std::string_view pending(c.in.data() + c.in_used, c.in.size() - c.in_used);
    torch::Decoded d = torch::decode(pending, c.dialect, !c.spoke, options_.torch_limits);
    if (d.outcome == torch::Outcome::need_more) break;
    if (d.outcome == torch::Outcome::bad) {
      refusals_.refused(c.peer, "not torch's store protocol: " + d.why, Clock::now());
      return close(id);
    }
    c.in_used += d.used;
    c.dialect = d.dialect;
    c.spoke = true;
    handle_torch(c, d.request);
    if (!connections_.count(id)) return;
  }
  compact_input(c);
}

void StoreServer::compact_input(Connection& c) {
  if (c.in_used == c.in.size()) {
    c.in.clear();
    c.in_used = 0;
  } else if (c.in_used > c.in.size() / 2) {
    c.in.erase(0, c.in_used);
    c.in_used = 0;
  }
  if (c.in.empty() && c.in.capacity() > 64 * 1024) std::string().swap(c.in);
}

// False when `c` is gone (closed here, or by a reply that woke it).
bool StoreServer::torch_set(Connection& c, const std::string& key, std::string value) {
  const std::uint64_t id = c.id;
  auto found = data_.find(key);
  if (found == data_.end() && data_.size() >= options_.limits.max_keys) {
    refusals_.refused(c.peer, "the workers' store holds its most keys already", Clock::now());
    close(c.id);
    return false;
  }
  if (!watchers_.empty()) {
    const bool created = found == data_.end();
    notify_watchers(key, created ? torch::WatchReply::key_created : torch::WatchReply::key_updated,
                    created ? std::string_view() : std::string_view(found->second), value);
  }
  data_[key] = std::move(value);
  wake_waiters(key);
  return connections_.count(id) > 0;
}

void StoreServer::handle_torch(Connection& c, const torch::Request& r) {
  using torch::Op;
  const std::string* key = r.keys.empty() ? nullptr : &r.keys.front();
  switch (r.op) {
    case Op::validate:
      return;  // the magic was checked by the decoder; torch's server says nothing
    case Op::set:
      (void)torch_set(c, *key, r.values.front());
      return;
    case Op::multi_set:
      for (std::size_t i = 0; i < r.keys.size(); ++i) {
        if (!torch_set(c, r.keys[i], r.values[i])) return;
      }
      return;
    case Op::append: {
      auto found = data_.find(*key);
      std::string value =
          found == data_.end() ? r.values.front() : found->second + r.values.front();
      (void)torch_set(c, *key, std::move(value));
      return;
    }
    case Op::compare_set: {
      // As torch's: an absent key is set only when the expected value is empty, and the reply
      // is what the key holds now (or, absent, the expected value).
      const std::string& expected = r.values[0];
      const std::string& desired = r.values[1];
      auto found = data_.find(*key);
      if (found == data_.end() && !expected.empty()) return reply(c, bytes_reply(expected));
      if (found != data_.end() && found->second != expected) {
        return reply(c, bytes_reply(found->second));
      }
      if (torch_set(c, *key, desired)) reply(c, bytes_reply(desired));
      return;
    }
    case Op::get: {
      auto found = data_.find(*key);
      return reply(c, bytes_reply(found == data_.end() ? std::string_view() : found->second));
    }
    case Op::multi_get: {
      std::string out;
      for (const std::string& k : r.keys) {
        auto found = data_.find(k);
        torch::put_bytes(out, found == data_.end() ? std::string_view() : found->second);
      }
      return reply(c, std::move(out));
    }
    case Op::add: {
      std::int64_t value = r.number;
      auto found = data_.find(*key);
      if (found != data_.end()) {
        std::int64_t current = 0;
        const std::string& text = found->second;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), current);
        if (ec != std::errc() || end != text.data() + text.size()) {
          // torch's server fails the same way (std::stoll throws) and drops the client.
          refusals_.refused(c.peer, "ADD on a key whose value is not a number", Clock::now());
          return close(c.id);
        }
        value = static_cast<std::int64_t>(static_cast<std::uint64_t>(current) +
                                          static_cast<std::uint64_t>(r.number));
      }
      if (torch_set(c, *key, std::to_string(value))) reply(c, i64_reply(value));
      return;
    }
    case Op::check:
      return reply(
          c, u8_reply(static_cast<std::uint8_t>(
                 all_present(r.keys) ? torch::CheckReply::ready : torch::CheckReply::not_ready)));
    case Op::wait:
      // One wait a connection: a new one replaces one its client gave up on.
      if (c.waiting) forget_wait(c);
      c.waiting = false;
      if (all_present(r.keys)) {
        return reply(c, u8_reply(static_cast<std::uint8_t>(torch::WaitReply::stop_waiting)));
      }
      return start_wait(c, Opcode::wait, r.keys, kNoTimeout);
    case Op::cancel_wait:
      if (c.waiting) forget_wait(c);
      c.waiting = false;
      return reply(c, u8_reply(static_cast<std::uint8_t>(torch::WaitReply::wait_canceled)));
    case Op::num_keys:
      return reply(c, i64_reply(static_cast<std::int64_t>(data_.size())));
    case Op::delete_key: {
      auto found = data_.find(*key);
      const bool existed = found != data_.end();
      if (existed && !watchers_.empty()) {
        notify_watchers(*key, torch::WatchReply::key_deleted, found->second, {});
      }
      if (existed) data_.erase(found);
      return reply(c, i64_reply(existed ? 1 : 0));
    }
    case Op::ping: {
      std::string out;
      torch::put_u32(out, static_cast<std::uint32_t>(r.number));
      return reply(c, std::move(out));
    }
    case Op::queue_push:
      queues_[*key].push_back(r.values.front());
      return wake_waiters(*key, true);
    case Op::queue_pop: {
      auto found = queues_.find(*key);
      std::string out;
      if (found == queues_.end() || found->second.empty()) {
        torch::put_i64(out, 0);
      } else {
        torch::put_i64(out, static_cast<std::int64_t>(found->second.size()));
        torch::put_bytes(out, found->second.front());
        found->second.pop_front();
        if (found->second.empty()) queues_.erase(found);
      }
      return reply(c, std::move(out));
    }
    case Op::queue_len: {
      auto found = queues_.find(*key);
      return reply(
          c,
          i64_reply(found == queues_.end() ? 0 : static_cast<std::int64_t>(found->second.size())));
    }
    case Op::list_keys: {
      std::string out;
      torch::put_i64(out, static_cast<std::int64_t>(data_.size()));
      for (const auto& [k, v] : data_) torch::put_bytes(out, k);
      return reply(c, std::move(out));
    }
    case Op::watch_key:
      watchers_[*key].insert(c.id);
      c.watching.push_back(*key);
      return reply(c, u8_reply(static_cast<std::uint8_t>(torch::WatchReply::callback_registered)));
  }
}

void StoreServer::notify_watchers(const std::string& key, torch::WatchReply change,
                                  std::string_view old, std::string_view now) {
  auto it = watchers_.find(key);
  if (it == watchers_.end()) return;
  std::string note;
  torch::put_u8(note, static_cast<std::uint8_t>(change));
  torch::put_bytes(note, key);
  torch::put_bytes(note, old);
  torch::put_bytes(note, now);
  const std::set<std::uint64_t> watching = it->second;  // a reply may close one of them
  for (std::uint64_t id : watching) {
    auto c = connections_.find(id);
    if (c != connections_.end()) reply(*c->second, note);
  }
}

void StoreServer::forget_watches(Connection& c) {
  for (const std::string& key : c.watching) {
    auto it = watchers_.find(key);
    if (it == watchers_.end()) continue;
    it->second.erase(c.id);
    if (it->second.empty()) watchers_.erase(it);
  }
  c.watching.clear();
}

}  // namespace aml::store
