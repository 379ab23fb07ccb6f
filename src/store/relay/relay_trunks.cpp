// The trunks of torch's door: a trunk's HELLO and streams, each stream a connection of its own
// without a socket, and their replies carried back together once a turn of the loop.
#include "store/relay/relay_trunks.hpp"

#include "store/relay/relay_wire.hpp"
#include "store/torch/torch_door.hpp"

namespace aml::store {
namespace {

constexpr std::size_t kMaxStreams = 16384;  // a node's worker connections at once

}  // namespace

bool RelayTrunks::speaks_relay(const Connection& c) const {
  const auto& s = static_cast<const TorchConnection&>(*c.state);
  if (s.trunk) return true;
  return !s.spoke && s.trunk_id == 0 &&
         relay::starts_like_hello(std::string_view(s.in).substr(s.in_used));
}

void RelayTrunks::process(Connection& c) {
  const std::uint64_t id = c.id;
  TorchConnection& t = TorchDoor::state(c);
  if (!t.trunk) {
    relay::Decoded hello = relay::decode_hello(std::string_view(t.in).substr(t.in_used));
    if (hello.outcome == relay::Outcome::need_more) return;
    if (hello.outcome == relay::Outcome::bad) {
      core_.refused(c.peer, hello.why);
      return core_.close(id);
    }
    t.in_used += hello.used;
    t.trunk = t.spoke = true;
    // Admitted: said back, so that the relay knows it may carry its workers' calls.
    c.out += relay::hello();
    queue_flush(c);
  }
  while (t.in_used < t.in.size()) {
    relay::Decoded d = relay::decode(std::string_view(t.in).substr(t.in_used));
    if (d.outcome == relay::Outcome::need_more) break;
    if (d.outcome == relay::Outcome::bad) {
      core_.refused(c.peer, "a relay's trunk broke: " + d.why);
      return core_.close(id);
    }
    t.in_used += d.used;
    if (d.kind == relay::Kind::data) {
      stream_data(c, d.stream, d.data);
    } else {
      stream_ended(c, d.stream);
    }
    if (!core_.exists(id)) return;
  }
  TorchDoor::compact_input(t);
}

void RelayTrunks::stream_data(Connection& trunk, std::uint32_t stream, std::string_view data) {
  TorchConnection& t = TorchDoor::state(trunk);
  auto found = t.streams.find(stream);
  Connection* s = nullptr;
  if (found != t.streams.end()) {
    s = core_.find(found->second);
  } else if (stream <= t.last_stream) {
    return;  // the rest of a stream closed here a moment ago: the relay has been told
  } else {
    t.last_stream = stream;
    if (t.streams.size() >= kMaxStreams ||
        core_.connection_count() >= core_.options().max_connections) {
      relay::put_close(trunk.out, stream);
      return queue_flush(trunk);
    }
    s = &core_.add_carried(trunk.peer);
    door_.opened(*s);
    TorchConnection& created = TorchDoor::state(*s);
    created.trunk_id = trunk.id;
    created.stream = stream;
    t.streams.emplace(stream, s->id);
  }
  TorchConnection& state = TorchDoor::state(*s);
  s->last_progress = StoreClock::now();
  state.in.append(data);
  if (state.in.size() - state.in_used >
      core_.options().torch_limits.max_request + relay::kMaxData) {
    return core_.close(s->id);  // more than one request's bounds before a whole one
  }
  door_.serve(*s);
}

void RelayTrunks::stream_ended(Connection& trunk, std::uint32_t stream) {
  TorchConnection& t = TorchDoor::state(trunk);
  auto found = t.streams.find(stream);
  if (found == t.streams.end()) return;
  const std::uint64_t id = found->second;
  t.streams.erase(found);  // the relay knows: its close tells it nothing
  core_.close(id);
}

void RelayTrunks::closed(Connection& c) {
  const TorchConnection& s = TorchDoor::state(c);
  if (s.trunk_id != 0) {
    // A stream closed here: its trunk tells the relay, which closes its worker's socket.
    Connection* trunk = core_.find(s.trunk_id);
    if (trunk && TorchDoor::state(*trunk).streams.erase(s.stream) > 0) {
      relay::put_close(trunk->out, s.stream);
      queue_flush(*trunk);
    }
  }
  std::vector<std::uint64_t> riders;  // a trunk's streams go with it
  for (const auto& [number, rider] : s.streams) riders.push_back(rider);
  for (std::uint64_t rider : riders) core_.close(rider);
}

void RelayTrunks::reply(Connection& stream, std::string_view frame) {
  const TorchConnection& s = TorchDoor::state(stream);
  Connection* found = core_.find(s.trunk_id);
  if (!found) return;
  Connection& trunk = *found;
  // A node's workers share the trunk's output: a stream whose replies pile up goes alone.
  if (trunk.out.size() - trunk.out_offset + frame.size() > 4 * core_.options().max_pending_output) {
    return core_.close(stream.id);
  }
  if (trunk.out_offset == trunk.out.size()) {
    trunk.out.clear();
    trunk.out_offset = 0;
  }
  relay::put_data(trunk.out, s.stream, frame);
  queue_flush(trunk);
}

// A trunk's replies go out once a turn of the loop, every stream's together: a barrier that
// wakes a node's eight ranks costs one send, not eight.
void RelayTrunks::queue_flush(Connection& trunk) {
  TorchConnection& t = TorchDoor::state(trunk);
  if (t.flush_queued) return;
  t.flush_queued = true;
  to_flush_.push_back(trunk.id);
}

void RelayTrunks::flush() {
  std::vector<std::uint64_t> ids;
  ids.swap(to_flush_);
  for (std::uint64_t id : ids) {
    Connection* t = core_.find(id);
    if (!t) continue;
    TorchDoor::state(*t).flush_queued = false;
    core_.send_now(id);
  }
}

}  // namespace aml::store
