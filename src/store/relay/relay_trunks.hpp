// The trunks of torch's door (relay_wire.hpp): a node's launcher carries its workers' store
// calls over one connection, a stream a worker connection. Each stream is served as a
// connection of its own without a socket (its own dialect, wait and watches; its replies go
// out on the trunk), so that node 0 holds one socket a node, and a stream that misbehaves is
// closed alone, as a worker's own connection would be.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "store/core/store_core.hpp"

namespace aml::store {

class TorchDoor;

class RelayTrunks {
 public:
  RelayTrunks(StoreCore& core, TorchDoor& door) : core_(core), door_(door) {}

  // Whether `c` is a trunk, or opens like one (its first bytes are the relay's HELLO).
  bool speaks_relay(const Connection& c) const;
  // A trunk's bytes: its HELLO, then each stream's data and ends.
  void process(Connection& trunk);
  // A stream's reply, carried on its trunk.
  void reply(Connection& stream, std::string_view frame);
  // A connection closed: a stream's trunk tells the relay, a trunk's streams go with it.
  void closed(Connection& c);
  // Every trunk's replies of this turn of the loop go out together.
  void flush();

 private:
  void stream_data(Connection& trunk, std::uint32_t stream, std::string_view data);
  void stream_ended(Connection& trunk, std::uint32_t stream);
  void queue_flush(Connection& trunk);

  StoreCore& core_;
  TorchDoor& door_;
  std::vector<std::uint64_t> to_flush_;
};

}  // namespace aml::store
