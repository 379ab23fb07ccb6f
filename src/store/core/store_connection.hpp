// One client connection of the store server, as both halves of the server see it: the
// connection side (store_server.cpp: sockets, frames, output) and the request side
// (store_server_requests.cpp: the key-value operations and blocked waits).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/core/store_server.hpp"

namespace aml::store {

// The epoll keys of the server's own descriptors; a connection's key is its id (from 1).
inline constexpr std::uint64_t kListenerEvent = 0;
inline constexpr std::uint64_t kWakeupEvent = ~0ull;

struct StoreServer::Connection {
  std::uint64_t id = 0;
  UniqueFd fd;
  FrameDecoder decoder;
  std::string out;
  std::size_t out_offset = 0;
  bool authenticated = false;
  // Behind a socket with two doors: its first bytes (kept in `in`) have not chosen one yet.
  bool undecided = false;
  bool close_after_send = false;
  bool want_write = false;
  // A blocked get or wait.
  bool waiting = false;
  std::uint64_t wait_seq = 0;
  Opcode wait_op{};
  std::vector<std::string> wait_keys;
  // Its entry in the deadline queue, when the wait has a timeout.
  std::optional<std::multimap<Clock::time_point, std::pair<std::uint64_t, std::uint64_t>>::iterator>
      deadline;
  Clock::time_point last_progress;  // its last bytes in: what silent() measures
  // Admission (store_server_admission.cpp): who it says it is and where the handshake stands.
  Clock::time_point accepted_at;
  std::string peer;      // "10.0.0.9:41234"'s address part, for refusals
  bool proving = false;  // the challenge is sent; PROVE is the only request taken
  Role role = Role::worker;
  std::string member;
  std::string client_nonce;
  std::string server_nonce;
  std::string watched_as;  // identify: the name silent() gives for it
  // Set (if absent) when the connection closes: key, value.
  std::optional<std::pair<std::string, std::string>> last_will;
  // torch's door (store_server_torch.cpp): the bytes not yet taken, how it numbers its queries,
  // whether it sent any, and the keys it watches (<= 2.0's callback connection).
  bool torch = false;
  std::string in;
  std::size_t in_used = 0;
  torch::Dialect dialect = torch::Dialect::legacy;
  bool spoke = false;
  std::vector<std::string> watching;
  // A node's relay (store_server_relay.cpp): its trunk carries the streams of that node's
  // workers, each served as a connection of its own with no socket (stream -> its id).
  bool trunk = false;
  std::unordered_map<std::uint32_t, std::uint64_t> streams;
  std::uint32_t last_stream = 0;  // streams are numbered up: a lower one is one that ended
  bool flush_queued = false;      // its replies go out at the end of this turn of the loop
  // A stream: the trunk it came on (0: a socket of its own) and its number there.
  std::uint64_t trunk_id = 0;
  std::uint32_t stream = 0;

  explicit Connection(std::uint32_t max_frame) : decoder(max_frame) {}
};

}  // namespace aml::store
