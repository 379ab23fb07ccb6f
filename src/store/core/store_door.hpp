// A door of the store server: one protocol over its core (store_core.hpp). The core owns the
// sockets, the keys, the blocked waits and the loop; a door decides who comes in, reads its
// clients' requests and answers them through the core. A new protocol is a new door, beside
// the launchers' (launchers/launchers_door.hpp) and torch's (torch/torch_door.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "store/core/store_connection.hpp"

namespace aml::store {

class StoreDoor {
 public:
  virtual ~StoreDoor() = default;

  // A connection at the listening socket, before it is one: false closes it (the door says why).
  virtual bool admits(const std::string& peer) = 0;
  // Out of descriptors at accept: the door closes one of its connections to make room, or
  // says there is none it may close.
  virtual bool make_room() { return false; }
  // A new connection (accepted here, or handed over with the bytes it sent so far).
  virtual void opened(Connection& c) = 0;
  // Bytes in. received() takes each read (it may close c); serve() then answers every whole
  // request, once the socket has nothing more to read.
  virtual void received(Connection& c, std::string_view bytes) = 0;
  virtual void serve(Connection& c) = 0;
  // Its peer closed its side, or its socket failed: c is closed right after.
  virtual void ended(Connection& /*c*/) {}
  // c's blocked wait ended: the reply it gets; then wait_over() goes on with what c sent since.
  virtual std::string wait_reply(Connection& c, bool timed_out) = 0;
  virtual void wait_over(Connection& /*c*/) {}
  // A reply to a connection without a socket of its own (a stream the door carries).
  virtual void reply_carried(Connection& /*c*/, std::string_view /*frame*/) {}
  // c is out of the server's table: what the door holds for it goes (it may close others).
  virtual void closed(Connection& /*c*/) {}
  // A member that stalls this long in the middle of a request is dropped.
  virtual bool mid_request(const Connection& c) const = 0;
  // Each turn of the loop; and how soon the door needs one (-1: no need).
  virtual void turn() {}
  virtual int wake_within_ms() const { return -1; }
  // At each of the server's checks (at least once a second): its deadlines.
  virtual void check(StoreClock::time_point /*now*/) {}
  virtual std::size_t unproven_count() const { return 0; }
};

}  // namespace aml::store
