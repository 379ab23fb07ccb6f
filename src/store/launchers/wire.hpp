// The rendezvous store's wire format (DESIGN §5): little-endian, length-prefixed frames.
//   frame    = u32 body_length, body
//   request  = u8 opcode, fields...        response = u8 status, fields...
//   string   = u32 length, bytes           i64 / u32 / u16 little-endian
// The first request on a connection is HELLO: u32 magic, u16 version, string token (the job's
// public id), u8 auth kind, u8 role, string member, string nonce. Where the job has a secret
// (or munge), the store answers with its nonce and its proof, and the client's next request is
// PROVE with its own (store/launchers/handshake.hpp): nothing else is served before.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aml::store {

inline constexpr std::uint32_t kMagic = 0x534c4d41;  // "AMLS" on the wire
inline constexpr std::uint16_t kVersion = 2;

enum class Opcode : std::uint8_t {
  hello = 1,
  set = 2,
  get = 3,          // key, u32 timeout_ms: blocks until the key exists
  add = 4,          // key, i64 delta -> i64 new value
  check = 5,        // u32 count, keys -> u8 all exist
  wait = 6,         // u32 count, keys, u32 timeout_ms
  erase = 7,        // key -> u8 existed
  compare_set = 8,  // key, expected, desired -> the value now stored
  // key, value: when this connection closes (its process died, its host went away) before it
  // clears this, the store sets key to value if it is absent — how a client's death is news
  // to the others at once. One a connection; a later one replaces it.
  last_will = 9,
  clear_last_will = 10,  // the connection is closing on purpose
  // key (a name): the store watches this connection's silence under that name (see silent).
  identify = 11,
  // u32 min_ms -> u32 count, names: the identified connections that sent nothing for min_ms
  // (counted from the server's own resumption where its loop was stalled itself). How the
  // store's host learns of a paused, hung or cut-off client without asking each one.
  silent = 12,
  // u32 count, keys, u32 timeout_ms -> u32 count, (u8 present, string value) a key: waits
  // until every key exists or the timeout passes, then gives what there is. One round trip
  // for what would be a get per key.
  get_all = 13,
  // No fields and no reply: the client is alive (what silent measures), at the cost of one
  // read on the server.
  heartbeat = 14,
  // string proof: the client's answer to the store's challenge (the reply to its HELLO).
  prove = 15,
  // No fields -> i64: the store's host's clock (CLOCK_REALTIME, ns). Half the round trip
  // brackets it: how the launchers put their ranks' times on one clock (--straggler-check).
  clock = 16,
};
inline constexpr std::uint8_t kLastOpcode = 16;

enum class Status : std::uint8_t { ok = 0, timeout = 1, error = 2 };

struct Limits {
  std::uint32_t max_frame = 1u << 20;  // bytes in one frame body
  std::uint32_t max_key = 4096;
  std::uint32_t max_value = 1u << 20;
  std::uint32_t max_keys = 1u << 20;   // keys held by the store
  std::uint32_t max_wait_keys = 1024;  // keys in one check or wait
  std::uint32_t max_member = 256;      // HELLO's member name
  std::uint32_t max_proof = 2048;      // a nonce, a MAC or a munge credential
};

// Builds one frame.
class FrameWriter {
 public:
  FrameWriter() { bytes_.resize(4); }
  FrameWriter& u8(std::uint8_t v);
  FrameWriter& u16(std::uint16_t v);
  FrameWriter& u32(std::uint32_t v);
  FrameWriter& i64(std::int64_t v);
  FrameWriter& str(std::string_view s);
  // The finished frame, its length prefix filled in.
  std::string finish();

 private:
  std::string bytes_;
};

// Reads the fields of one frame body; every read is bounds-checked and fails for good once
// the body runs short.
class FieldReader {
 public:
  explicit FieldReader(std::string_view body) : rest_(body) {}
  std::optional<std::uint8_t> u8();
  std::optional<std::uint16_t> u16();
  std::optional<std::uint32_t> u32();
  std::optional<std::int64_t> i64();
  std::optional<std::string_view> str(std::uint32_t max_length);
  bool at_end() const { return rest_.empty(); }

 private:
  std::optional<std::uint64_t> little_endian(std::size_t bytes);
  std::string_view rest_;
};

// Cuts frames out of a byte stream as it arrives.
class FrameDecoder {
 public:
  explicit FrameDecoder(std::uint32_t max_frame) : max_frame_(max_frame) {}
  // Appends received bytes.
  void feed(std::string_view bytes);
  // The next whole frame body, or nullopt until more bytes arrive. Sets error() for a length
  // above the limit: the stream cannot be trusted after that.
  std::optional<std::string> next();
  bool error() const { return error_; }
  bool mid_frame() const { return buffer_.size() > offset_; }
  std::size_t buffered() const { return buffer_.size() - offset_; }
  void set_max_frame(std::uint32_t max_frame) { max_frame_ = max_frame; }

 private:
  std::string buffer_;
  std::size_t offset_ = 0;  // bytes at the front already taken as frames
  std::uint32_t max_frame_;
  bool error_ = false;
};

// A decoded request, checked against the limits.
struct Request {
  Opcode op{};
  std::vector<std::string> keys;  // one key, or several for check / wait / get_all
  std::string value;              // set: value; compare_set: expected
  std::string desired;            // compare_set
  std::int64_t delta = 0;         // add
  std::uint32_t timeout_ms = 0;   // get / wait / get_all; silent: min_ms
  // hello (auth and role as store/launchers/handshake.hpp's AuthKind and Role)
  std::uint32_t magic = 0;
  std::uint16_t version = 0;
  std::string token;
  std::uint8_t auth = 0;
  std::uint8_t role = 0;
  std::string member;
  std::string nonce;  // hello: the client's; prove: its proof
};

// nullopt with `why` set when the body is not a well-formed request within the limits.
std::optional<Request> parse_request(std::string_view body, const Limits& limits, std::string& why);

// Constant-time comparison, so that a wrong token's timing says nothing about the right one.
bool same_token(std::string_view a, std::string_view b);

}  // namespace aml::store
