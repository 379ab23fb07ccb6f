// The workers' store relay (DESIGN §3): each node's launcher serves its workers' torch store
// calls on the host's loopback and carries them to the job's store at node 0 over one
// connection a node, so that node 0 holds one connection a node rather than one a rank. The
// relay does not read torch's protocol: it carries each worker connection's bytes as a stream
// of its own, and node 0 decodes every stream as it would a worker's own connection.
//   hello  = "AMLRELAY", u16 version    (the trunk's first bytes, relay to node 0; node 0 says
//                                         it back once it has admitted the trunk)
//   frame  = u8 kind, u32 stream, u32 length, bytes          numbers little-endian
//   kinds: data (bytes of that stream, either way), close (that stream ended, either way; no
//   bytes). The relay opens each stream with an empty data frame as the worker connects, so
//   streams open in rising numbers: a data frame for a lower number than the last opened is
//   the rest of one that was closed.
// Pure functions: bytes in, a frame out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace aml::store::relay {

inline constexpr std::string_view kHelloMagic = "AMLRELAY";
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::size_t kHelloSize = 10;
inline constexpr std::size_t kHeaderSize = 9;
// A data frame carries at most this much: a relay cuts what a worker sends into pieces so.
inline constexpr std::uint32_t kMaxData = 256 * 1024;

enum class Kind : std::uint8_t { data = 1, close = 2 };

enum class Outcome : std::uint8_t { need_more, frame, bad };

struct Decoded {
  Outcome outcome = Outcome::need_more;
  Kind kind{};
  std::uint32_t stream = 0;
  std::string_view data;  // a view into the bytes decoded
  std::size_t used = 0;
  std::string why;  // bad: what was wrong
};

// The hello, as a relay opens its trunk with.
std::string hello();
// Whether `bytes` begin a hello (need_more while they could still), and which version.
Decoded decode_hello(std::string_view bytes);
// Whether a connection's first bytes could be a relay's hello rather than a torch client's
// request: torch's first byte is a query number (0 to 17), never the hello's 'A'.
bool starts_like_hello(std::string_view bytes);

// The first frame of `bytes`.
Decoded decode(std::string_view bytes);

void put_open(std::string& out, std::uint32_t stream);
void put_data(std::string& out, std::uint32_t stream, std::string_view bytes);
void put_close(std::string& out, std::uint32_t stream);

}  // namespace aml::store::relay
