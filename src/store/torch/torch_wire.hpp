// torch's TCPStore wire protocol, as its clients speak it (torch.distributed.TCPStore, every
// generation from 1.13 on), so that the launcher can serve the workers' own store calls
// (TORCHELASTIC_USE_AGENT_STORE=True). Pure functions: bytes in, a request out; replies built
// the way torch's own servers build them.
//   request = u8 query, fields...      string = u64 length, bytes      numbers little-endian
// Three numberings of the query byte:
//   validated (torch >= 2.2): the connection's first request is VALIDATE 0 with u32 magic
//     0x3C85F7CE; SET 1, COMPARE_SET 2, GET 3, ADD 4, CHECK 5, WAIT 6, GETNUMKEYS 7,
//     DELETE_KEY 8, APPEND 9, MULTI_GET 10, MULTI_SET 11, CANCEL_WAIT 12, PING 13 (2.5),
//     QUEUE_PUSH 14, QUEUE_POP 15, QUEUE_LEN 16, LIST_KEYS 17.
//   legacy (torch <= 2.1, no VALIDATE): SET 0, COMPARE_SET 1, GET 2, ADD 3, CHECK 4, WAIT 5,
//     GETNUMKEYS 6, then <= 2.0's WATCH_KEY 7 (on its second, callback connection) and
//     DELETE_KEY 8, or 2.1's DELETE_KEY 7, APPEND 8, MULTI_GET 9, MULTI_SET 10, CANCEL_WAIT 11.
//     Which of the two is told from the connection itself: 7 as its first request is a
//     callback connection's WATCH_KEY (<= 2.0), 7 later or any of 9-11 is 2.1; 8 is 2.1's
//     APPEND when a value follows its key in the bytes at hand (2.1 writes a request in one
//     buffer), <= 2.0's DELETE_KEY when nothing does (that client waits for its reply).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aml::store::torch {

inline constexpr std::uint32_t kValidateMagic = 0x3C85F7CE;

enum class Op : std::uint8_t {
  validate,
  set,
  compare_set,
  get,
  add,
  check,
  wait,
  num_keys,
  delete_key,
  append,
  multi_get,
  multi_set,
  cancel_wait,
  ping,
  queue_push,
  queue_pop,
  queue_len,
  list_keys,
  watch_key,
};
const char* op_name(Op op);

// How a connection numbers its queries.
enum class Dialect : std::uint8_t {
  legacy,      // torch <= 2.1, not yet told which (every connection starts here)
  legacy_2_0,  // <= 2.0
  legacy_2_1,  // 2.1
  validated,   // torch >= 2.2
};

// torch's libuv server's bounds, and one of ours: a request's whole size (a MULTI_SET of 128K
// values of 8 MiB each would otherwise be a terabyte).
struct Limits {
  std::uint64_t max_key = 8 * 1024;
  std::uint64_t max_value = 8 * 1024 * 1024;
  std::uint64_t max_keys = 128 * 1024;  // in one check, wait, multi_get or multi_set
  std::uint64_t max_request = 16 * 1024 * 1024;
};

struct Request {
  Op op{};
  std::vector<std::string> keys;    // one key, or several (check, wait, multi_*)
  std::vector<std::string> values;  // set, append, queue_push: one; compare_set: expected,
                                    // desired; multi_set: one a key
  std::int64_t number = 0;          // add: the delta; ping: the nonce; validate: the magic
};

enum class Outcome : std::uint8_t { need_more, request, bad };

struct Decoded {
  Outcome outcome = Outcome::need_more;
  Request request;
  std::size_t used = 0;  // bytes the request took
  Dialect dialect{};     // the connection's dialect after this request
  std::string why;       // bad: what was wrong
};

// The first request of `bytes`, on a connection that numbers its queries as `dialect`
// (a legacy request may settle which), `first`: no request came on it before.
Decoded decode(std::string_view bytes, Dialect dialect, bool first, const Limits& limits);

// Replies, as torch's servers write them.
enum class WaitReply : std::uint8_t { stop_waiting = 0, wait_canceled = 1 };
enum class CheckReply : std::uint8_t { ready = 0, not_ready = 1 };
enum class WatchReply : std::uint8_t {
  key_updated = 0,
  key_created = 1,
  key_deleted = 2,
  callback_registered = 3,
};
void put_u8(std::string& out, std::uint8_t v);
void put_u32(std::string& out, std::uint32_t v);
void put_i64(std::string& out, std::int64_t v);
void put_bytes(std::string& out, std::string_view bytes);  // u64 length, bytes

}  // namespace aml::store::torch
