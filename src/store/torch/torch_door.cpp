// torch's door: its connections' bytes into requests (torch_wire.hpp) and its replies as
// torch's servers give them. An unknown operation or a broken request closes that connection
// alone, as torch's libuv server does.
#include "store/torch/torch_door.hpp"

#include <charconv>

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

bool TorchDoor::admits(const std::string& peer) {
  if (!options_.admitted || options_.admitted->admits(peer)) return true;
  // Not one of the job's hosts: closed before it can say a word.
  core_.refused(peer, "not one of the job's hosts (the workers' store admits them alone)");
  return false;
}

// torch's door admits by address: its connections are the job's from their accept.
void TorchDoor::opened(Connection& c) {
  c.member = true;
  c.state = std::make_unique<TorchConnection>();
}

void TorchDoor::received(Connection& c, std::string_view bytes) {
  TorchConnection& s = state(c);
  s.in.append(bytes);
  if (s.trunk) return trunks_.process(c);  // a trunk's streams are bounded each, not the trunk
  // More than one request's bounds before a whole one.
  if (s.in.size() - s.in_used > options_.torch_limits.max_request + kReadBytes) core_.close(c.id);
}

void TorchDoor::serve(Connection& c) {
  if (trunks_.speaks_relay(c)) return trunks_.process(c);
  const std::uint64_t id = c.id;
  TorchConnection& s = state(c);
  // Unlike the launchers' protocol, a torch client's requests go on while it waits (CANCEL_WAIT
  // comes that way): each is taken as it comes.
  while (!c.close_after_send && s.in_used < s.in.size()) {
    const std::string_view pending(s.in.data() + s.in_used, s.in.size() - s.in_used);
    torch::Decoded d = torch::decode(pending, s.dialect, !s.spoke, options_.torch_limits);
    if (d.outcome == torch::Outcome::need_more) break;
    if (d.outcome == torch::Outcome::bad) {
      core_.refused(c.peer, "not torch's store protocol: " + d.why);
      return core_.close(id);
    }
    s.in_used += d.used;
    s.dialect = d.dialect;
    s.spoke = true;
    handle(c, d.request);
    if (!core_.exists(id)) return;
  }
  compact_input(s);
}

void TorchDoor::compact_input(TorchConnection& s) {
  if (s.in_used == s.in.size()) {
    s.in.clear();
    s.in_used = 0;
  } else if (s.in_used > s.in.size() / 2) {
    s.in.erase(0, s.in_used);
    s.in_used = 0;
  }
  if (s.in.empty() && s.in.capacity() > 64 * 1024) std::string().swap(s.in);
}

std::string TorchDoor::wait_reply(Connection& /*c*/, bool /*timed_out*/) {
  return u8_reply(static_cast<std::uint8_t>(torch::WaitReply::stop_waiting));
}

void TorchDoor::closed(Connection& c) {
  if (!state(c).watching.empty()) forget_watches(c);
  trunks_.closed(c);
}

bool TorchDoor::mid_request(const Connection& c) const {
  const auto& s = static_cast<const TorchConnection&>(*c.state);
  return s.in.size() > s.in_used;
}

// False when `c` is gone (closed here, or by a reply that woke it).
bool TorchDoor::set(Connection& c, const std::string& key, std::string value) {
  const std::uint64_t id = c.id;
  auto& data = core_.data();
  auto found = data.find(key);
  if (found == data.end() && data.size() >= options_.limits.max_keys) {
    core_.refused(c.peer, "the workers' store holds its most keys already");
    core_.close(c.id);
    return false;
  }
  if (!watchers_.empty()) {
    const bool created = found == data.end();
    notify_watchers(key, created ? torch::WatchReply::key_created : torch::WatchReply::key_updated,
                    created ? std::string_view() : std::string_view(found->second), value);
  }
  data[key] = std::move(value);
  core_.wake_waiters(key);
  return core_.exists(id);
}

void TorchDoor::handle(Connection& c, const torch::Request& r) {
  using torch::Op;
  auto& data = core_.data();
  auto& queues = core_.queues();
  const std::string* key = r.keys.empty() ? nullptr : &r.keys.front();
  switch (r.op) {
    case Op::validate:
      return;  // the magic was checked by the decoder; torch's server says nothing
    case Op::set:
      (void)set(c, *key, r.values.front());
      return;
    case Op::multi_set:
      for (std::size_t i = 0; i < r.keys.size(); ++i) {
        if (!set(c, r.keys[i], r.values[i])) return;
      }
      return;
    case Op::append: {
      auto found = data.find(*key);
      std::string value = found == data.end() ? r.values.front() : found->second + r.values.front();
      (void)set(c, *key, std::move(value));
      return;
    }
    case Op::compare_set: {
      // As torch's: an absent key is set only when the expected value is empty, and the reply
      // is what the key holds now (or, absent, the expected value).
      const std::string& expected = r.values[0];
      const std::string& desired = r.values[1];
      auto found = data.find(*key);
      if (found == data.end() && !expected.empty()) return core_.reply(c, bytes_reply(expected));
      if (found != data.end() && found->second != expected) {
        return core_.reply(c, bytes_reply(found->second));
      }
      if (set(c, *key, desired)) core_.reply(c, bytes_reply(desired));
      return;
    }
    case Op::get: {
      auto found = data.find(*key);
      return core_.reply(c, bytes_reply(found == data.end() ? std::string_view() : found->second));
    }
    case Op::multi_get: {
      std::string out;
      for (const std::string& k : r.keys) {
        auto found = data.find(k);
        torch::put_bytes(out, found == data.end() ? std::string_view() : found->second);
      }
      return core_.reply(c, std::move(out));
    }
    case Op::add: {
      std::int64_t value = r.number;
      auto found = data.find(*key);
      if (found != data.end()) {
        std::int64_t current = 0;
        const std::string& text = found->second;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), current);
        if (ec != std::errc() || end != text.data() + text.size()) {
          // torch's server fails the same way (std::stoll throws) and drops the client.
          core_.refused(c.peer, "ADD on a key whose value is not a number");
          return core_.close(c.id);
        }
        value = static_cast<std::int64_t>(static_cast<std::uint64_t>(current) +
                                          static_cast<std::uint64_t>(r.number));
      }
      if (set(c, *key, std::to_string(value))) core_.reply(c, i64_reply(value));
      return;
    }
    case Op::check:
      return core_.reply(c, u8_reply(static_cast<std::uint8_t>(
                                core_.all_present(r.keys) ? torch::CheckReply::ready
                                                          : torch::CheckReply::not_ready)));
    case Op::wait:
      // One wait a connection: a new one replaces one its client gave up on.
      core_.cancel_wait(c);
      if (core_.all_present(r.keys)) {
        return core_.reply(c, u8_reply(static_cast<std::uint8_t>(torch::WaitReply::stop_waiting)));
      }
      return core_.start_wait(c, r.keys, kNoTimeout);
    case Op::cancel_wait:
      core_.cancel_wait(c);
      return core_.reply(c, u8_reply(static_cast<std::uint8_t>(torch::WaitReply::wait_canceled)));
    case Op::num_keys:
      return core_.reply(c, i64_reply(static_cast<std::int64_t>(data.size())));
    case Op::delete_key: {
      auto found = data.find(*key);
      const bool existed = found != data.end();
      if (existed && !watchers_.empty()) {
        notify_watchers(*key, torch::WatchReply::key_deleted, found->second, {});
      }
      if (existed) data.erase(found);
      return core_.reply(c, i64_reply(existed ? 1 : 0));
    }
    case Op::ping: {
      std::string out;
      torch::put_u32(out, static_cast<std::uint32_t>(r.number));
      return core_.reply(c, std::move(out));
    }
    case Op::queue_push:
      queues[*key].push_back(r.values.front());
      return core_.wake_waiters(*key, true);
    case Op::queue_pop: {
      auto found = queues.find(*key);
      std::string out;
      if (found == queues.end() || found->second.empty()) {
        torch::put_i64(out, 0);
      } else {
        torch::put_i64(out, static_cast<std::int64_t>(found->second.size()));
        torch::put_bytes(out, found->second.front());
        found->second.pop_front();
        if (found->second.empty()) queues.erase(found);
      }
      return core_.reply(c, std::move(out));
    }
    case Op::queue_len: {
      auto found = queues.find(*key);
      return core_.reply(
          c,
          i64_reply(found == queues.end() ? 0 : static_cast<std::int64_t>(found->second.size())));
    }
    case Op::list_keys: {
      std::string out;
      torch::put_i64(out, static_cast<std::int64_t>(data.size()));
      for (const auto& [k, v] : data) torch::put_bytes(out, k);
      return core_.reply(c, std::move(out));
    }
    case Op::watch_key:
      watchers_[*key].insert(c.id);
      state(c).watching.push_back(*key);
      return core_.reply(
          c, u8_reply(static_cast<std::uint8_t>(torch::WatchReply::callback_registered)));
  }
}

void TorchDoor::notify_watchers(const std::string& key, torch::WatchReply change,
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
    if (Connection* c = core_.find(id)) core_.reply(*c, note);
  }
}

void TorchDoor::forget_watches(Connection& c) {
  for (const std::string& key : state(c).watching) {
    auto it = watchers_.find(key);
    if (it == watchers_.end()) continue;
    it->second.erase(c.id);
    if (it->second.empty()) watchers_.erase(it);
  }
  state(c).watching.clear();
}

}  // namespace aml::store
