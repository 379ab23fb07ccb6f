// One listening socket, two doors (DESIGN §3): the launchers' store and torch's share the job's
// MASTER_PORT, and a connection's first bytes say which it knocks at. Neither protocol's
// server speaks first, so the choice costs no round trip.
//   launchers' (wire.hpp): u32 length < 64 KiB, then HELLO (1) and "AMLS"
//                          -> xx xx 00 00 01 41 4d 4c 53
//   torch's (torch_wire.hpp): a query byte, then a u64 key length, or VALIDATE's magic
//                          -> 00 ce f7 85 3c (>= 2.2), or 03 05 00 00 00 00 00 00 00 ... (1.13)
//   a relay's trunk (relay_wire.hpp): "AMLRELAY", which goes to torch's door
// Pure: bytes in, a door out.
#pragma once

#include <chrono>
#include <string_view>

namespace aml::store {

enum class FirstBytes : unsigned char {
  undecided,  // a prefix of the launchers' HELLO so far: wait for more
  launchers,  // the launchers' HELLO
  torch,      // anything else: torch's door judges it
};

FirstBytes door_for(std::string_view first_bytes);

// Enough bytes to decide: a launcher's HELLO is sent in one piece, so fewer than this after a
// short wait are a torch client's one-byte request (torch <= 2.1's GETNUMKEYS).
inline constexpr std::size_t kDoorBytes = 9;
// How long the server waits for the rest: a connection that sent a prefix of a HELLO and
// nothing more this long is a torch client waiting for its reply.
inline constexpr std::chrono::milliseconds kPrefixWait{50};

}  // namespace aml::store
