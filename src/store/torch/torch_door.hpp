// torch's door of the store server (DESIGN §3): torch's TCPStore protocol (torch_wire.hpp)
// over the core, so that the workers' own store calls (init_process_group, Gloo's and NCCL's
// address exchange, barriers, a user's TCPStore) are served by the launcher over the same keys
// and waits as the launchers' own. It admits by address: the job's hosts alone. A node's relay
// carries its workers' connections on one trunk (relay/relay_trunks.hpp).
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/core/store_core.hpp"
#include "store/core/store_door.hpp"
#include "store/relay/relay_trunks.hpp"
#include "store/torch/torch_wire.hpp"

namespace aml::store {

// What torch's door keeps of a connection.
struct TorchConnection : ConnectionState {
  std::size_t bytes() const override { return sizeof(*this) + in.capacity(); }

  // The bytes not yet taken, how it numbers its queries, whether it sent any, and the keys it
  // watches (<= 2.0's callback connection).
  std::string in;
  std::size_t in_used = 0;
  torch::Dialect dialect = torch::Dialect::legacy;
  bool spoke = false;
  std::vector<std::string> watching;
  // A relay's trunk: the streams it carries (stream -> their connection's id).
  bool trunk = false;
  std::unordered_map<std::uint32_t, std::uint64_t> streams;
  std::uint32_t last_stream = 0;  // streams are numbered up: a lower one is one that ended
  bool flush_queued = false;      // its replies go out at the end of this turn of the loop
  // A stream: the trunk it came on (0: a socket of its own) and its number there.
  std::uint64_t trunk_id = 0;
  std::uint32_t stream = 0;
};

class TorchDoor final : public StoreDoor {
 public:
  explicit TorchDoor(StoreCore& core)
      : core_(core), options_(core.options()), trunks_(core, *this) {}

  static TorchConnection& state(Connection& c) { return static_cast<TorchConnection&>(*c.state); }

  bool admits(const std::string& peer) override;
  void opened(Connection& c) override;
  void received(Connection& c, std::string_view bytes) override;
  void serve(Connection& c) override;
  void ended(Connection& c) override { serve(c); }  // what it sent before it left is done
  std::string wait_reply(Connection& c, bool timed_out) override;
  void reply_carried(Connection& c, std::string_view frame) override { trunks_.reply(c, frame); }
  void closed(Connection& c) override;
  bool mid_request(const Connection& c) const override;
  void turn() override { trunks_.flush(); }

  // Drops what `c` has taken from its input.
  static void compact_input(TorchConnection& s);

 private:
  void handle(Connection& c, const torch::Request& r);
  bool set(Connection& c, const std::string& key, std::string value);  // false: c is gone
  void notify_watchers(const std::string& key, torch::WatchReply change, std::string_view old,
                       std::string_view now);
  void forget_watches(Connection& c);

  StoreCore& core_;
  const ServerOptions& options_;
  RelayTrunks trunks_;
  // key -> connections told of its changes (torch <= 2.0's watches).
  std::unordered_map<std::string, std::set<std::uint64_t>> watchers_;
};

}  // namespace aml::store
