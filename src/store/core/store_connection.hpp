// One client connection of the store server, as the core sees it (store_core.hpp): its socket,
// its output, its blocked wait. What its protocol keeps of it is its door's (ConnectionState).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/unique_fd.hpp"

namespace aml::store {

using StoreClock = std::chrono::steady_clock;
// When each timed wait ends: (connection id, that wait's sequence number).
using Deadlines = std::multimap<StoreClock::time_point, std::pair<std::uint64_t, std::uint64_t>>;

// A door's own part of a connection (its decoder, handshake, dialect ...).
struct ConnectionState {
  virtual ~ConnectionState() = default;
  virtual std::size_t bytes() const = 0;  // what it holds, for reports
};

struct Connection {
  std::uint64_t id = 0;
  // None: a connection carried by another one (a relay's stream); its door sends its replies.
  UniqueFd fd;
  std::string out;
  std::size_t out_offset = 0;
  // Proven, or admitted by its address: a member of the job, whose requests come first.
  bool member = false;
  bool close_after_send = false;
  bool want_write = false;
  // A blocked wait: on these keys, until they are all there or its deadline.
  bool waiting = false;
  std::uint64_t wait_seq = 0;
  std::vector<std::string> wait_keys;
  // How many of its keys it is still registered for: each one's arrival counts it down, and
  // only at 0 are all its keys looked at (a wait on 1,000 keys costs one look, not 1,000).
  std::size_t wait_missing = 0;
  std::optional<Deadlines::iterator> deadline;
  StoreClock::time_point accepted_at;
  StoreClock::time_point last_progress;  // its last bytes in: what a stall is measured by
  // When its last wait was answered: a client that asks again at once (a launcher's watch) is
  // silent from then on, not from its last question (store/launchers/launchers_requests.cpp).
  StoreClock::time_point answered_at;
  std::string peer;  // "10.0.0.9:41234"'s address part, for refusals
  std::unique_ptr<ConnectionState> state;
};

}  // namespace aml::store
