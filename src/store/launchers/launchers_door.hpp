// The launchers' door of the store server (DESIGN §5): their own protocol (wire.hpp) over the
// core, each client a member once it has proven itself in a handshake (handshake.hpp). Where
// torch's door is behind the same socket (torch_doorway.hpp), a connection's first bytes
// choose between the two (first_bytes.hpp).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "store/core/store_core.hpp"
#include "store/core/store_door.hpp"
#include "store/launchers/handshake.hpp"
#include "store/launchers/wire.hpp"

namespace aml::store {

// What the launchers' door keeps of a connection.
struct LaunchersConnection : ConnectionState {
  explicit LaunchersConnection(std::uint32_t max_frame) : decoder(max_frame) {}
  std::size_t bytes() const override { return sizeof(*this) + first_bytes.capacity(); }

  FrameDecoder decoder;
  // Behind a socket with two doors: its first bytes have not chosen one yet.
  bool undecided = false;
  std::string first_bytes;
  // Admission: who it says it is and where the handshake stands.
  bool proving = false;  // the challenge is sent; PROVE is the only request taken
  Role role = Role::worker;
  std::string member;
  std::string client_nonce;
  std::string server_nonce;
  std::string watched_as;  // identify: the name silent() gives for it
  Opcode wait_op{};        // the request its blocked wait answers
  // Set (if absent) when the connection closes: key, value.
  std::optional<std::pair<std::string, std::string>> last_will;
};

class LaunchersDoor final : public StoreDoor {
 public:
  explicit LaunchersDoor(StoreCore& core) : core_(core), options_(core.options()) {}

  // launchers_door.cpp: arrivals, the door a connection chooses, frames.
  bool admits(const std::string& peer) override;
  bool make_room() override;
  void opened(Connection& c) override;
  void received(Connection& c, std::string_view bytes) override;
  void serve(Connection& c) override;
  void ended(Connection& c) override;
  std::string wait_reply(Connection& c, bool timed_out) override;
  void wait_over(Connection& c) override { serve(c); }
  void closed(Connection& c) override;
  bool mid_request(const Connection& c) const override;
  void turn() override;
  int wake_within_ms() const override;
  void check(StoreClock::time_point now) override;
  std::size_t unproven_count() const override { return unproven_.size(); }

 private:
  static LaunchersConnection& state(Connection& c) {
    return static_cast<LaunchersConnection&>(*c.state);
  }
  static const LaunchersConnection& state(const Connection& c) {
    return static_cast<const LaunchersConnection&>(*c.state);
  }
  // `late`: no more bytes came in time, so a prefix of a HELLO is torch's.
  void choose_door(Connection& c, bool late);
  void hand_to_torch(Connection& c);
  // launchers_admission.cpp: HELLO and PROVE, what a proven worker may not do, refusals.
  void admit(Connection& c, const Request& r);
  void hello(Connection& c, const Request& r);
  void prove(Connection& c, const Request& r);
  void proven(Connection& c);
  std::optional<std::string> server_proof(Connection& c);  // nullopt: refused
  bool worker_may(const Connection& c, const Request& r, std::string& why) const;
  void refuse(Connection& c, const std::string& why);
  void evict_oldest_unproven(const std::string& why);
  // launchers_requests.cpp: the key-value operations.
  void handle(Connection& c, const Request& r);
  void reply_error(Connection& c, std::string_view message, bool then_close);
  std::string values_frame(Status status, const std::vector<std::string>& keys) const;
  std::string silent_frame(std::chrono::milliseconds at_least) const;

  StoreCore& core_;
  const ServerOptions& options_;
  std::set<std::uint64_t> unproven_;     // by id, so by age: the oldest is the first
  std::set<std::uint64_t> prefix_only_;  // undecided, and sent a few bytes (choose_late)
};

}  // namespace aml::store
