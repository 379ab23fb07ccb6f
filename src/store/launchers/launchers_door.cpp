// The launchers' door: how a connection arrives and leaves, which door its first bytes choose
// where torch's is behind the same socket, and its frames in order. Its handshake is in
// launchers_admission.cpp, its requests in launchers_requests.cpp.
#include "store/launchers/launchers_door.hpp"

#include "store/core/first_bytes.hpp"

namespace aml::store {

bool LaunchersDoor::admits(const std::string& /*peer*/) {
  if (unproven_.size() >= options_.max_unproven) {
    evict_oldest_unproven("over " + std::to_string(options_.max_unproven) +
                          " connections that had not proven themselves: the oldest went");
  }
  return true;
}

bool LaunchersDoor::make_room() {
  if (unproven_.empty()) return false;
  evict_oldest_unproven("out of file descriptors: the oldest unproven connection made room");
  return true;
}

void LaunchersDoor::opened(Connection& c) {
  auto state = std::make_unique<LaunchersConnection>(options_.max_unproven_frame);
  // With torch's door behind it, a connection's first bytes choose (first_bytes.hpp).
  state->undecided = options_.torch_doorway != nullptr;
  c.state = std::move(state);
  unproven_.insert(c.id);
}

void LaunchersDoor::received(Connection& c, std::string_view bytes) {
  LaunchersConnection& s = state(c);
  if (s.undecided) {
    s.first_bytes.append(bytes);
    const std::uint64_t id = c.id;
    choose_door(c, false);
    if (!core_.exists(id)) return;  // gone through torch's door
  } else {
    s.decoder.feed(bytes);
  }
  // Before it has proven itself a connection gets a handshake's worth of memory.
  if (!c.member && s.decoder.buffered() > 2 * options_.max_unproven_frame) {
    refuse(c, "sent more than a handshake before proving itself");
  }
}

void LaunchersDoor::serve(Connection& c) {
  const std::uint64_t id = c.id;
  LaunchersConnection& s = state(c);
  // A blocked client's further requests stay queued until its wait ends.
  while (!c.waiting && !c.close_after_send) {
    std::optional<std::string> body = s.decoder.next();
    if (s.decoder.error()) {
      if (!c.member) return refuse(c, "not an aml store client (a frame length over the limit)");
      return reply_error(c, "frame length over the limit", true);
    }
    if (!body) return;
    std::string why;
    std::optional<Request> request = parse_request(*body, options_.limits, why);
    if (!request && !c.member) return refuse(c, "not an aml store client (" + why + ")");
    if (!request) return reply_error(c, why, true);
    if (!c.member) {
      admit(c, *request);
    } else {
      handle(c, *request);
    }
    if (!core_.exists(id)) return;
  }
}

void LaunchersDoor::ended(Connection& c) {
  // It left at this store's proof: it checked it and found it wrong.
  if (state(c).proving)
    core_.refused(c.peer, "it left at this store's proof (another job secret?)");
}

void LaunchersDoor::closed(Connection& c) {
  prefix_only_.erase(c.id);
  unproven_.erase(c.id);
  auto& will = state(c).last_will;
  if (will && !core_.full_for(will->first) && !core_.data().count(will->first)) {
    core_.data()[will->first] = will->second;
    core_.wake_waiters(will->first);
  }
}

bool LaunchersDoor::mid_request(const Connection& c) const { return state(c).decoder.mid_frame(); }

void LaunchersDoor::choose_door(Connection& c, bool late) {
  LaunchersConnection& s = state(c);
  const FirstBytes door = door_for(s.first_bytes);
  if (door == FirstBytes::undecided && !late) {
    if (!s.first_bytes.empty()) prefix_only_.insert(c.id);
    return;
  }
  s.undecided = false;
  prefix_only_.erase(c.id);
  if (door == FirstBytes::launchers) {
    s.decoder.feed(s.first_bytes);
    std::string().swap(s.first_bytes);
    return;
  }
  hand_to_torch(c);
}

// Connections that sent a prefix of a HELLO and no more for a while: torch's.
void LaunchersDoor::turn() {
  if (prefix_only_.empty()) return;
  const auto now = StoreClock::now();
  std::vector<std::uint64_t> late;
  for (std::uint64_t id : prefix_only_) {
    if (now - core_.find(id)->last_progress >= kPrefixWait) late.push_back(id);
  }
  for (std::uint64_t id : late) choose_door(*core_.find(id), true);
}

int LaunchersDoor::wake_within_ms() const {
  return prefix_only_.empty() ? -1 : static_cast<int>(kPrefixWait.count());
}

void LaunchersDoor::hand_to_torch(Connection& c) {
  const std::string peer = c.peer;
  std::string bytes = std::move(state(c).first_bytes);
  UniqueFd fd = core_.release(c);
  switch (options_.torch_doorway->hand(std::move(fd), peer, std::move(bytes))) {
    case TorchDoorway::Handed::taken:
      return;
    case TorchDoorway::Handed::stranger:
      return core_.refused(peer,
                           "not one of the job's hosts (the workers' store admits them alone)");
    case TorchDoorway::Handed::closed:
      return core_.refused(peer, "torch's protocol while no round's workers' store is open");
  }
}

// Unproven connections are dropped by age, however they trickle bytes.
void LaunchersDoor::check(StoreClock::time_point now) {
  std::vector<std::uint64_t> late;
  for (std::uint64_t id : unproven_) {
    if (now - core_.find(id)->accepted_at < options_.handshake_timeout) break;
    late.push_back(id);
  }
  const std::string deadline = std::to_string(options_.handshake_timeout.count()) + " ms";
  for (std::uint64_t id : late) {
    Connection* c = core_.find(id);
    if (!c) continue;  // a refusal's close took it already
    // Its bytes were there, unread (this loop behind): a HELLO among them proves it now.
    if (core_.catch_up(*c) && (!core_.exists(id) || !unproven_.count(id))) continue;
    // Silent so long with torch's door behind: a torch client that connected and has not asked
    // anything yet (torch's TCPStore says nothing until it is used). torch's door takes it if
    // it comes from one of the job's hosts.
    if (state(*c).undecided) {
      choose_door(*c, true);
    } else {
      refuse(*c, "no handshake within " + deadline);
    }
  }
}

}  // namespace aml::store
