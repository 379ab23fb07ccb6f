// The launchers' door's requests: the key-value operations (set, get, add, wait, ...) of its
// members over the core's keys and waits, and their replies (wire.hpp).
#include <algorithm>
#include <charconv>
#include <ctime>

#include "store/launchers/launchers_door.hpp"

namespace aml::store {

namespace {

std::string status_frame(Status status) {
  return FrameWriter().u8(static_cast<std::uint8_t>(status)).finish();
}

}  // namespace

void LaunchersDoor::reply_error(Connection& c, std::string_view message, bool then_close) {
  // With then_close the connection goes once the error is sent: `c` may be gone on return.
  if (then_close) c.close_after_send = true;
  core_.reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::error)).str(message).finish());
}

void LaunchersDoor::handle(Connection& c, const Request& r) {
  if (std::string why; !worker_may(c, r, why)) {
    core_.refused(c.peer, why);
    return reply_error(c, why, true);
  }
  auto& data = core_.data();
  const std::string* key = r.keys.empty() ? nullptr : &r.keys.front();
  switch (r.op) {
    case Opcode::hello:
    case Opcode::prove:
      return reply_error(c, "a handshake request after the handshake", true);
    case Opcode::set:
      if (core_.full_for(*key))
        return reply_error(c, "the store holds its maximum number of keys", false);
      data[*key] = r.value;
      core_.reply(c, status_frame(Status::ok));
      return core_.wake_waiters(*key);
    case Opcode::get:
    case Opcode::wait:
      if (core_.all_present(r.keys)) {
        FrameWriter w;
        w.u8(static_cast<std::uint8_t>(Status::ok));
        if (r.op == Opcode::get) w.str(data[*key]);
        return core_.reply(c, w.finish());
      }
      if (r.timeout_ms == 0) return core_.reply(c, status_frame(Status::timeout));
      state(c).wait_op = r.op;
      return core_.start_wait(c, r.keys, r.timeout_ms);
    case Opcode::get_all:
      if (core_.all_present(r.keys) || r.timeout_ms == 0) {
        return core_.reply(
            c, values_frame(core_.all_present(r.keys) ? Status::ok : Status::timeout, r.keys));
      }
      state(c).wait_op = r.op;
      return core_.start_wait(c, r.keys, r.timeout_ms);
    case Opcode::add: {
      if (core_.full_for(*key))
        return reply_error(c, "the store holds its maximum number of keys", false);
      std::int64_t current = 0;
      auto found = data.find(*key);
      if (found != data.end()) {
        const std::string& text = found->second;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), current);
        if (ec != std::errc() || end != text.data() + text.size()) {
          return reply_error(c, "add on a key whose value is not a number", false);
        }
      }
      std::int64_t next = static_cast<std::int64_t>(static_cast<std::uint64_t>(current) +
                                                    static_cast<std::uint64_t>(r.delta));
      data[*key] = std::to_string(next);
      core_.reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).i64(next).finish());
      return core_.wake_waiters(*key);
    }
    case Opcode::check:
      return core_.reply(c, FrameWriter()
                                .u8(static_cast<std::uint8_t>(Status::ok))
                                .u8(core_.all_present(r.keys))
                                .finish());
    case Opcode::erase: {
      bool existed = data.erase(*key) > 0;
      return core_.reply(
          c, FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).u8(existed).finish());
    }
    case Opcode::compare_set: {
      auto found = data.find(*key);
      bool swap = found == data.end() ? r.value.empty() : found->second == r.value;
      if (swap && core_.full_for(*key))
        return reply_error(c, "the store holds its maximum number of keys", false);
      if (swap) data[*key] = r.desired;
      // Unswapped, nothing was inserted: `found` still holds.
      const std::string& now = swap ? r.desired : (found == data.end() ? r.value : found->second);
      core_.reply(c, FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).str(now).finish());
      if (swap) core_.wake_waiters(*key);
      return;
    }
    case Opcode::last_will:
      state(c).last_will.emplace(*key, r.value);
      return core_.reply(c, status_frame(Status::ok));
    case Opcode::clear_last_will:
      state(c).last_will.reset();
      return core_.reply(c, status_frame(Status::ok));
    case Opcode::identify:
      state(c).watched_as = *key;
      return core_.reply(c, status_frame(Status::ok));
    case Opcode::silent:
      return core_.reply(c, silent_frame(std::chrono::milliseconds(r.timeout_ms)));
    case Opcode::heartbeat:
      return;  // its arrival was the point (last_progress)
    case Opcode::clock: {
      timespec now{};
      clock_gettime(CLOCK_REALTIME, &now);
      const std::int64_t ns = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
      return core_.reply(c,
                         FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).i64(ns).finish());
    }
  }
}

std::string LaunchersDoor::wait_reply(Connection& c, bool timed_out) {
  const Status status = timed_out ? Status::timeout : Status::ok;
  if (state(c).wait_op == Opcode::get_all) return values_frame(status, c.wait_keys);
  FrameWriter w;
  w.u8(static_cast<std::uint8_t>(status));
  if (!timed_out && state(c).wait_op == Opcode::get) w.str(core_.data()[c.wait_keys.front()]);
  return w.finish();
}

std::string LaunchersDoor::values_frame(Status status, const std::vector<std::string>& keys) const {
  const auto& data = core_.data();
  FrameWriter w;
  w.u8(static_cast<std::uint8_t>(status)).u32(static_cast<std::uint32_t>(keys.size()));
  for (const std::string& k : keys) {
    auto found = data.find(k);
    w.u8(found != data.end());
    w.str(found != data.end() ? std::string_view(found->second) : std::string_view());
  }
  return w.finish();
}

std::string LaunchersDoor::silent_frame(std::chrono::milliseconds at_least) const {
  // Bounded like a wait's keys: enough to name the first lost ones. A member's sign of life is
  // its watch asking again once answered: one that waits for its answer has said all it had
  // to; one answered is silent from the answer on (not from its question, up to a wait's
  // timeout earlier), so that only a silence of `at_least` itself names it.
  const auto now = StoreClock::now();
  std::vector<const std::string*> names;
  for (const auto& [id, c] : core_.connections()) {
    const std::string& name = state(*c).watched_as;
    if (name.empty() || c->waiting) continue;
    const auto since = std::max({c->last_progress, c->answered_at, core_.resumed()});
    if (now - since < at_least) continue;
    names.push_back(&name);
    if (names.size() == options_.limits.max_wait_keys) break;
  }
  FrameWriter w;
  w.u8(static_cast<std::uint8_t>(Status::ok)).u32(static_cast<std::uint32_t>(names.size()));
  for (const std::string* name : names) w.str(*name);
  return w.finish();
}

}  // namespace aml::store
