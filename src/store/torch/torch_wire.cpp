#include "store/torch/torch_wire.hpp"

#include <optional>

namespace aml::store::torch {
namespace {

// Reads one request's fields; `short_` once the bytes run out (more may come), `bad` once a
// field breaks a limit (nothing that follows can be trusted).
class Reader {
 public:
  Reader(std::string_view bytes, const Limits& limits) : bytes_(bytes), limits_(limits) {}

  std::optional<std::uint64_t> number(std::size_t width) {
    if (failed()) return std::nullopt;
    if (bytes_.size() - at_ < width) {
      short_ = true;
      return std::nullopt;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < width; ++i) {
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[at_ + i])) << (8 * i);
    }
    at_ += width;
    return v;
  }
  std::optional<std::string> string(std::uint64_t max, const char* what) {
    auto length = number(8);
    if (!length) return std::nullopt;
    if (*length > max) {
      why = std::string(what) + " of " + std::to_string(*length) + " bytes (at most " +
            std::to_string(max) + ")";
      return std::nullopt;
    }
    if (at_ + *length > limits_.max_request) {
      why = "a request over " + std::to_string(limits_.max_request) + " bytes";
      return std::nullopt;
    }
    if (bytes_.size() - at_ < *length) {
      short_ = true;
      return std::nullopt;
    }
    std::string s(bytes_.substr(at_, *length));
    at_ += *length;
    return s;
  }
  std::optional<std::string> key() { return string(limits_.max_key, "a key"); }
  std::optional<std::string> value() { return string(limits_.max_value, "a value"); }
  std::optional<std::uint64_t> count() {
    auto n = number(8);
    if (n && *n > limits_.max_keys) {
      why = std::to_string(*n) + " keys in one request (at most " +
            std::to_string(limits_.max_keys) + ")";
      return std::nullopt;
    }
    return n;
  }
  bool keys(std::vector<std::string>& out) {
    auto n = count();
    if (!n) return false;
    for (std::uint64_t i = 0; i < *n; ++i) {
      auto k = key();
      if (!k) return false;
      out.push_back(std::move(*k));
    }
    return true;
  }

  bool failed() const { return short_ || !why.empty(); }
  bool ran_short() const { return short_ && why.empty(); }
  std::size_t at() const { return at_; }
  std::size_t left() const { return bytes_.size() - at_; }

  std::string why;

 private:
  std::string_view bytes_;
  const Limits& limits_;
  std::size_t at_ = 0;
  bool short_ = false;
};

std::optional<Op> validated_op(std::uint8_t query) {
  if (query > static_cast<std::uint8_t>(Op::list_keys)) return std::nullopt;
  return static_cast<Op>(query);
}

// A legacy query byte; 7 and 8 may settle the dialect (see torch_wire.hpp).
std::optional<Op> legacy_op(std::uint8_t query, Dialect& dialect, bool first) {
  static constexpr Op kCommon[] = {Op::set,   Op::compare_set, Op::get,     Op::add,
                                   Op::check, Op::wait,        Op::num_keys};
  if (query < 7) return kCommon[query];
  if (query == 7) {
    if (dialect == Dialect::legacy) dialect = first ? Dialect::legacy_2_0 : Dialect::legacy_2_1;
    return dialect == Dialect::legacy_2_0 ? Op::watch_key : Op::delete_key;
  }
  if (query == 8) {
    if (dialect == Dialect::legacy_2_0) return Op::delete_key;
    return Op::append;  // or <= 2.0's DELETE_KEY: decided by what follows the key
  }
  if (query <= 11 && dialect != Dialect::legacy_2_0) {
    dialect = Dialect::legacy_2_1;
    static constexpr Op kLater[] = {Op::multi_get, Op::multi_set, Op::cancel_wait};
    return kLater[query - 9];
  }
  return std::nullopt;
}

}  // namespace

const char* op_name(Op op) {
  static constexpr const char* kNames[] = {
      "VALIDATE",   "SET",        "COMPARE_SET", "GET",       "ADD",       "CHECK",       "WAIT",
      "GETNUMKEYS", "DELETE_KEY", "APPEND",      "MULTI_GET", "MULTI_SET", "CANCEL_WAIT", "PING",
      "QUEUE_PUSH", "QUEUE_POP",  "QUEUE_LEN",   "LIST_KEYS", "WATCH_KEY"};
  return kNames[static_cast<std::size_t>(op)];
}

Decoded decode(std::string_view bytes, Dialect dialect, bool first, const Limits& limits) {
  Decoded d;
  d.dialect = dialect;
  if (bytes.empty()) return d;
  const auto query = static_cast<std::uint8_t>(bytes[0]);
  // A connection's first bytes say its generation: torch >= 2.2 begins with VALIDATE and its
  // magic, which no legacy SET can (its key's length would be the magic, over the limit).
  if (first && dialect == Dialect::legacy && query == 0) {
    if (bytes.size() < 5) return d;
    Reader probe(bytes.substr(1), limits);
    if (probe.number(4) == kValidateMagic) d.dialect = Dialect::validated;
  }
  std::optional<Op> op =
      d.dialect == Dialect::validated ? validated_op(query) : legacy_op(query, d.dialect, first);
  if (!op) {
    d.outcome = Outcome::bad;
    d.why = "an unknown operation (" + std::to_string(query) + ")";
    return d;
  }
  Reader in(bytes.substr(1), limits);
  Request& r = d.request;
  r.op = *op;
  auto take = [&](std::optional<std::string> s, std::vector<std::string>& into) {
    if (s) into.push_back(std::move(*s));
  };
  switch (r.op) {
    case Op::validate:
      if (auto magic = in.number(4)) {
        r.number = static_cast<std::int64_t>(*magic);
        if (*magic != kValidateMagic) in.why = "VALIDATE with a wrong magic number";
      }
      break;
    case Op::set:
    case Op::append:
    case Op::queue_push:
      take(in.key(), r.keys);
      if (r.op == Op::append && d.dialect == Dialect::legacy && !in.failed() && in.left() == 0) {
        // <= 2.0's DELETE_KEY 8: its client sent the key and waits for the reply.
        r.op = Op::delete_key;
        d.dialect = Dialect::legacy_2_0;
        break;
      }
      take(in.value(), r.values);
      if (r.op == Op::append && !in.failed() && d.dialect == Dialect::legacy) {
        d.dialect = Dialect::legacy_2_1;
      }
      break;
    case Op::compare_set:
      take(in.key(), r.keys);
      take(in.value(), r.values);
      take(in.value(), r.values);
      break;
    case Op::get:
    case Op::delete_key:
    case Op::queue_pop:
    case Op::queue_len:
    case Op::watch_key:
      take(in.key(), r.keys);
      break;
    case Op::add:
      take(in.key(), r.keys);
      if (auto delta = in.number(8)) r.number = static_cast<std::int64_t>(*delta);
      break;
    case Op::check:
    case Op::wait:
    case Op::multi_get:
      in.keys(r.keys);
      break;
    case Op::multi_set:
      if (auto n = in.count()) {
        for (std::uint64_t i = 0; i < *n && !in.failed(); ++i) {
          take(in.key(), r.keys);
          take(in.value(), r.values);
        }
      }
      break;
    case Op::ping:
      if (auto nonce = in.number(4)) r.number = static_cast<std::int64_t>(*nonce);
      break;
    case Op::num_keys:
    case Op::cancel_wait:
    case Op::list_keys:
      break;
  }
  if (!in.why.empty()) {
    d.outcome = Outcome::bad;
    d.why = std::string(op_name(r.op)) + ": " + in.why;
    return d;
  }
  if (in.ran_short()) {
    d.dialect = dialect;  // nothing is settled by half a request
    d.request = Request{};
    return d;
  }
  d.outcome = Outcome::request;
  d.used = 1 + in.at();
  return d;
}

void put_u8(std::string& out, std::uint8_t v) { out.push_back(static_cast<char>(v)); }

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_i64(std::string& out, std::int64_t v) {
  const auto u = static_cast<std::uint64_t>(v);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

void put_bytes(std::string& out, std::string_view bytes) {
  put_i64(out, static_cast<std::int64_t>(bytes.size()));
  out.append(bytes);
}

}  // namespace aml::store::torch
