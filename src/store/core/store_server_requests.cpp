// The store server's request side: the key-value operations (set, get, add, wait, ...), the
// blocked gets and waits with their registry and deadlines. The connections, frames and
// output are store_server.cpp's.
#include <algorithm>
#include <charconv>

#include "store/core/store_connection.hpp"
#include "store/core/store_server.hpp"

namespace aml::store {

namespace {

constexpr std::uint32_t kForever = 0xffffffffu;

std::string status_frame(Status status) {
  return FrameWriter().u8(static_cast<std::uint8_t>(status)).finish();
}

}  // namespace

std::size_t StoreServer::pending_wait_entries() const {
  std::size_t entries = deadlines_.size();
  for (const auto& [key, waiting] : waiters_) entries += waiting.size();
  return entries;
}
void StoreServer::handle(Connection& c, const Request& r) {
  if (std::string why; !worker_may(c, r, why)) {
    refusals_.refused(c.peer, why, Clock::now());
    return reply_error(c, why, true);
  }
  const std::string* key = r.keys.empty() ? nullptr : &r.keys.front();
  auto would_exceed = [&](const std::string& k) {
    return !data_.count(k) && data_.size() >= options_.limits.max_keys;
  };
  switch (r.op) {
    case Opcode::hello:
    case Opcode::prove:
      return reply_error(c, "a handshake request after the handshake", true);
    case Opcode::set:
      if (would_exceed(*key))
        return reply_error(c, "the store holds its maximum number of keys", false);
      data_[*key] = r.value;
      reply(c, status_frame(Status::ok));
      return wake_waiters(*key);
    case Opcode::get:
    case Opcode::wait:
      if (all_present(r.keys)) {
        FrameWriter w;
        w.u8(static_cast<std::uint8_t>(Status::ok));
        if (r.op == Opcode::get) w.str(data_[*key]);
        return reply(c, w.finish());
      }
      if (r.timeout_ms == 0) return reply(c, status_frame(Status::timeout));
      return start_wait(c, r.op, r.keys, r.timeout_ms);
    case Opcode::get_all:
      if (all_present(r.keys) || r.timeout_ms == 0) {
        return reply(c, values_frame(all_present(r.keys) ? Status::ok : Status::timeout, r.keys));
      }
      return start_wait(c, r.op, r.keys, r.timeout_ms);
    case Opcode::add: {
      if (would_exceed(*key))
        return reply_error(c, "the store holds its maximum number of keys", false);
      std::int64_t current = 0;
      auto found = data_.find(*key);
      if (found != data_.end()) {
        const std::string& text = found->second;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), current);
        if (ec != std::errc() || end != text.data() + text.size()) {
          return reply_error(c, "add on a key whose value is not a number", false);
        }
      }
      std::int64_t next = static_cast<std::int64_t>(static_cast<std::uint64_t>(current) +
                                                    static_cast<std::uint64_t>(r.delta));
      data_[*key] = std::to_string(next);
      reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).i64(next).finish());
      return wake_waiters(*key);
    }
    case Opcode::check:
      return reply(
          c,
          FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).u8(all_present(r.keys)).finish());
    case Opcode::erase: {
      bool existed = data_.erase(*key) > 0;
      return reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).u8(existed).finish());
    }
    case Opcode::compare_set: {
      auto found = data_.find(*key);
      bool swap = found == data_.end() ? r.value.empty() : found->second == r.value;
      if (swap && would_exceed(*key))
        return reply_error(c, "the store holds its maximum number of keys", false);
      if (swap) data_[*key] = r.desired;
      const std::string& now = swap ? r.desired : (found == data_.end() ? r.value : found->second);
      reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).str(now).finish());
      if (swap) wake_waiters(*key);
      return;
    }
    case Opcode::last_will:
      c.last_will.emplace(*key, r.value);
      return reply(c, status_frame(Status::ok));
    case Opcode::clear_last_will:
      c.last_will.reset();
      return reply(c, status_frame(Status::ok));
    case Opcode::identify:
      c.watched_as = *key;
      return reply(c, status_frame(Status::ok));
    case Opcode::silent:
      return reply(c, silent_frame(std::chrono::milliseconds(r.timeout_ms)));
    case Opcode::heartbeat:
      return;  // its arrival was the point (last_progress)
  }
}

std::string StoreServer::values_frame(Status status, const std::vector<std::string>& keys) const {
  FrameWriter w;
  w.u8(static_cast<std::uint8_t>(status)).u32(static_cast<std::uint32_t>(keys.size()));
  for (const std::string& k : keys) {
    auto found = data_.find(k);
    w.u8(found != data_.end());
    w.str(found != data_.end() ? std::string_view(found->second) : std::string_view());
  }
  return w.finish();
}

std::string StoreServer::silent_frame(std::chrono::milliseconds at_least) const {
  // Bounded like a wait's keys: enough to name the first lost ones.
  const auto now = Clock::now();
  std::vector<const std::string*> names;
  for (const auto& [id, c] : connections_) {
    if (c->watched_as.empty()) continue;
    if (now - std::max(c->last_progress, resumed_) < at_least) continue;
    names.push_back(&c->watched_as);
    if (names.size() == options_.limits.max_wait_keys) break;
  }
  FrameWriter w;
  w.u8(static_cast<std::uint8_t>(Status::ok)).u32(static_cast<std::uint32_t>(names.size()));
  for (const std::string* name : names) w.str(*name);
  return w.finish();
}

bool StoreServer::all_present(const std::vector<std::string>& keys) const {
  for (const std::string& k : keys) {
    if (data_.count(k)) continue;
    // torch's: a waiter on a queue is woken by its first entry.
    auto queue = queues_.find(k);
    if (queue == queues_.end() || queue->second.empty()) return false;
  }
  return true;
}

void StoreServer::start_wait(Connection& c, Opcode op, const std::vector<std::string>& keys,
                             std::uint32_t timeout_ms) {
  c.waiting = true;
  ++c.wait_seq;
  c.wait_op = op;
  c.wait_keys = keys;
  for (const std::string& k : keys) {
    if (!all_present({k})) waiters_[k][c.id] = c.wait_seq;
  }
  if (timeout_ms != kForever) {
    c.deadline = deadlines_.emplace(Clock::now() + std::chrono::milliseconds(timeout_ms),
                                    std::make_pair(c.id, c.wait_seq));
  }
}

void StoreServer::forget_wait(Connection& c) {
  // A wait that ends leaves nothing behind: a client polling with short timeouts on a key
  // that never comes must not grow the registry or the deadline queue.
  for (const std::string& k : c.wait_keys) {
    auto it = waiters_.find(k);
    if (it == waiters_.end()) continue;
    auto entry = it->second.find(c.id);
    if (entry != it->second.end() && entry->second == c.wait_seq) it->second.erase(entry);
    if (it->second.empty()) waiters_.erase(it);
  }
  if (c.deadline) deadlines_.erase(*c.deadline);
  c.deadline.reset();
}

void StoreServer::finish_wait(Connection& c, Status status) {
  forget_wait(c);
  c.waiting = false;
  std::string frame;
  if (c.torch) {
    torch::put_u8(frame, static_cast<std::uint8_t>(torch::WaitReply::stop_waiting));
  } else if (c.wait_op == Opcode::get_all) {
    frame = values_frame(status, c.wait_keys);
  } else {
    FrameWriter w;
    w.u8(static_cast<std::uint8_t>(status));
    if (status == Status::ok && c.wait_op == Opcode::get) w.str(data_[c.wait_keys.front()]);
    frame = w.finish();
  }
  c.wait_keys.clear();
  const std::uint64_t id = c.id;
  reply(c, std::move(frame));
  // A torch connection's later requests were taken while it waited; an aml one's are queued.
  if (connections_.count(id) && !c.torch) process_frames(c);
}

void StoreServer::wake_waiters(const std::string& key, bool just_one) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  auto waiting = std::move(it->second);
  waiters_.erase(it);
  for (auto entry = waiting.begin(); entry != waiting.end(); ++entry) {
    auto c = connections_.find(entry->first);
    if (c == connections_.end() || !c->second->waiting || c->second->wait_seq != entry->second) {
      continue;
    }
    if (!all_present(c->second->wait_keys)) continue;
    finish_wait(*c->second, Status::ok);
    if (just_one) {
      // The others wait on for the queue's next entry.
      for (auto rest = std::next(entry); rest != waiting.end(); ++rest) {
        waiters_[key].insert(*rest);
      }
      return;
    }
  }
}

void StoreServer::expire_deadlines() {
  const auto now = Clock::now();
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    auto [id, seq] = deadlines_.begin()->second;
    auto c = connections_.find(id);
    if (c == connections_.end() || !c->second->waiting || c->second->wait_seq != seq) {
      deadlines_.erase(deadlines_.begin());
      continue;
    }
    finish_wait(*c->second, Status::timeout);  // erases its deadline entry
  }
}

}  // namespace aml::store
