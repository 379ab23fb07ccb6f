// The torch door's trunks (relay_wire.hpp): a node's launcher carries its workers' store calls
// over one connection, a stream a worker connection. Each stream is served as a connection of
// its own without a socket (its own dialect, wait and watches; its replies go out on the
// trunk), so that node 0 holds one socket a node, and a stream that misbehaves is closed
// alone, as a worker's own connection would be.
#include "store/core/store_connection.hpp"
#include "store/core/store_server.hpp"
#include "store/relay/relay_wire.hpp"

namespace aml::store {
namespace {

constexpr std::size_t kMaxStreams = 16384;  // a node's worker connections at once

}  // namespace

bool StoreServer::speaks_relay(const Connection& c) const {
  if (c.trunk) return true;
  return !c.spoke && c.trunk_id == 0 &&
         relay::starts_like_hello(std::string_view(c.in).substr(c.in_used));
}

void StoreServer::process_trunk(Connection& c) {
  const std::uint64_t id = c.id;
  if (!c.trunk) {
    relay::Decoded hello = relay::decode_hello(std::string_view(c.in).substr(c.in_used));
    if (hello.outcome == relay::Outcome::need_more) return;
    if (hello.outcome == relay::Outcome::bad) {
      refusals_.refused(c.peer, hello.why, Clock::now());
      return close(id);
    }
    c.in_used += hello.used;
    c.trunk = c.spoke = true;
    // Admitted: said back, so that the relay knows it may carry its workers' calls.
    c.out += relay::hello();
    queue_flush(c);
  }
  while (c.in_used < c.in.size()) {
    relay::Decoded d = relay::decode(std::string_view(c.in).substr(c.in_used));
    if (d.outcome == relay::Outcome::need_more) break;
    if (d.outcome == relay::Outcome::bad) {
      refusals_.refused(c.peer, "a relay's trunk broke: " + d.why, Clock::now());
      return close(id);
    }
    c.in_used += d.used;
    if (d.kind == relay::Kind::data) {
      stream_data(c, d.stream, d.data);
    } else {
      stream_ended(c, d.stream);
    }
    if (!connections_.count(id)) return;
  }
  compact_input(c);
}

void StoreServer::stream_data(Connection& trunk, std::uint32_t stream, std::string_view data) {
  auto found = trunk.streams.find(stream);
  Connection* s = nullptr;
  if (found != trunk.streams.end()) {
    s = connections_.at(found->second).get();
  } else if (stream <= trunk.last_stream) {
    return;  // the rest of a stream closed here a moment ago: the relay has been told
  } else {
    trunk.last_stream = stream;
    if (trunk.streams.size() >= kMaxStreams || connections_.size() >= options_.max_connections) {
      relay::put_close(trunk.out, stream);
      return queue_flush(trunk);
    }
    auto created = std::make_unique<Connection>(options_.max_unproven_frame);
    created->id = next_id_++;
    created->peer = trunk.peer;
    created->torch = created->authenticated = true;
    created->trunk_id = trunk.id;
    created->stream = stream;
    created->accepted_at = Clock::now();
    s = created.get();
    trunk.streams.emplace(stream, s->id);
    connections_.emplace(s->id, std::move(created));
  }
  s->last_progress = Clock::now();
  s->in.append(data);
  if (s->in.size() - s->in_used > options_.torch_limits.max_request + relay::kMaxData) {
    return close(s->id);  // more than one request's bounds before a whole one
  }
  process_torch(*s);
}

void StoreServer::stream_ended(Connection& trunk, std::uint32_t stream) {
  auto found = trunk.streams.find(stream);
  if (found == trunk.streams.end()) return;
  const std::uint64_t id = found->second;
  trunk.streams.erase(found);  // the relay knows: its close tells it nothing
  close(id);
}

void StoreServer::stream_closed(std::uint64_t trunk_id, std::uint32_t stream) {
  auto t = connections_.find(trunk_id);
  if (t == connections_.end() || t->second->streams.erase(stream) == 0) return;
  relay::put_close(t->second->out, stream);
  queue_flush(*t->second);
}

void StoreServer::reply_on_trunk(Connection& s, std::string_view frame) {
  auto t = connections_.find(s.trunk_id);
  if (t == connections_.end()) return;
  Connection& trunk = *t->second;
  // A node's workers share the trunk's output: a stream whose replies pile up goes alone.
  if (trunk.out.size() - trunk.out_offset + frame.size() > 4 * options_.max_pending_output) {
    return close(s.id);
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
void StoreServer::queue_flush(Connection& trunk) {
  if (trunk.flush_queued) return;
  trunk.flush_queued = true;
  trunks_to_flush_.push_back(trunk.id);
}

void StoreServer::flush_trunks() {
  std::vector<std::uint64_t> ids;
  ids.swap(trunks_to_flush_);
  for (std::uint64_t id : ids) {
    auto t = connections_.find(id);
    if (t == connections_.end()) continue;
    t->second->flush_queued = false;
    on_writable(id);
  }
}

}  // namespace aml::store
