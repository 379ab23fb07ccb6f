#include "store/launchers/wire.hpp"

namespace aml::store {

FrameWriter& FrameWriter::u8(std::uint8_t v) {
  bytes_.push_back(static_cast<char>(v));
  return *this;
}
FrameWriter& FrameWriter::u16(std::uint16_t v) {
  for (int i = 0; i < 2; ++i) bytes_.push_back(static_cast<char>(v >> (8 * i)));
  return *this;
}
FrameWriter& FrameWriter::u32(std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<char>(v >> (8 * i)));
  return *this;
}
FrameWriter& FrameWriter::i64(std::int64_t v) {
  auto u = static_cast<std::uint64_t>(v);
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>(u >> (8 * i)));
  return *this;
}
FrameWriter& FrameWriter::str(std::string_view s) {
  u32(static_cast<std::uint32_t>(s.size()));
  bytes_.append(s);
  return *this;
}
std::string FrameWriter::finish() {
  auto length = static_cast<std::uint32_t>(bytes_.size() - 4);
  for (int i = 0; i < 4; ++i) bytes_[i] = static_cast<char>(length >> (8 * i));
  return std::move(bytes_);
}

std::optional<std::uint64_t> FieldReader::little_endian(std::size_t bytes) {
  if (rest_.size() < bytes) {
    rest_ = {};
    return std::nullopt;
  }
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i)
    v |= std::uint64_t(static_cast<unsigned char>(rest_[i])) << (8 * i);
  rest_.remove_prefix(bytes);
  return v;
}
std::optional<std::uint8_t> FieldReader::u8() {
  auto v = little_endian(1);
  return v ? std::optional<std::uint8_t>(static_cast<std::uint8_t>(*v)) : std::nullopt;
}
std::optional<std::uint16_t> FieldReader::u16() {
  auto v = little_endian(2);
  return v ? std::optional<std::uint16_t>(static_cast<std::uint16_t>(*v)) : std::nullopt;
}
std::optional<std::uint32_t> FieldReader::u32() {
  auto v = little_endian(4);
  return v ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*v)) : std::nullopt;
}
std::optional<std::int64_t> FieldReader::i64() {
  auto v = little_endian(8);
  return v ? std::optional<std::int64_t>(static_cast<std::int64_t>(*v)) : std::nullopt;
}
std::optional<std::string_view> FieldReader::str(std::uint32_t max_length) {
  auto length = u32();
  if (!length || *length > max_length || *length > rest_.size()) {
    rest_ = {};
    return std::nullopt;
  }
  std::string_view s = rest_.substr(0, *length);
  rest_.remove_prefix(*length);
  return s;
}

void FrameDecoder::feed(std::string_view bytes) {
  // Taken frames are dropped from the front only now and then, not at every frame.
  if (offset_ > 0 && offset_ * 2 >= buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<std::string> FrameDecoder::next() {
  if (error_ || buffer_.size() - offset_ < 4) return std::nullopt;
  std::uint32_t length = 0;
  for (int i = 0; i < 4; ++i) {
    length |= std::uint32_t(static_cast<unsigned char>(buffer_[offset_ + i])) << (8 * i);
  }
  if (length > max_frame_ || length == 0) {
    error_ = true;
    return std::nullopt;
  }
  if (buffer_.size() - offset_ < 4 + std::size_t(length)) return std::nullopt;
  std::string body = buffer_.substr(offset_ + 4, length);
  offset_ += 4 + std::size_t(length);
  if (offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  }
  return body;
}

std::optional<Request> parse_request(std::string_view body, const Limits& limits,
                                     std::string& why) {
  FieldReader in(body);
  Request r;
  auto op = in.u8();
  if (!op || *op < 1 || *op > kLastOpcode) {
    why = "unknown opcode";
    return std::nullopt;
  }
  r.op = static_cast<Opcode>(*op);
  auto key = [&]() -> bool {
    auto k = in.str(limits.max_key);
    if (!k || k->empty()) return false;
    r.keys.emplace_back(*k);
    return true;
  };
  auto value = [&](std::string& into) -> bool {
    auto v = in.str(limits.max_value);
    if (!v) return false;
    into.assign(*v);
    return true;
  };
  auto keys = [&]() -> bool {
    auto count = in.u32();
    if (!count || *count == 0 || *count > limits.max_wait_keys) return false;
    for (std::uint32_t i = 0; i < *count; ++i) {
      if (!key()) return false;
    }
    return true;
  };
  bool ok = false;
  switch (r.op) {
    case Opcode::hello: {
      auto magic = in.u32();
      auto version = in.u16();
      auto token = in.str(limits.max_key);
      ok = magic && version && token;
      if (!ok) break;
      r.magic = *magic;
      r.version = *version;
      r.token.assign(*token);
      // Another version's fields are not read: the store answers with the version it speaks.
      if (r.magic != kMagic || r.version != kVersion) return r;
      auto auth = in.u8();
      auto role = in.u8();
      auto member = in.str(limits.max_member);
      auto nonce = in.str(limits.max_proof);
      ok = auth && role && member && nonce;
      if (!ok) break;
      r.auth = *auth;
      r.role = *role;
      r.member.assign(*member);
      r.nonce.assign(*nonce);
      break;
    }
    case Opcode::prove: {
      auto proof = in.str(limits.max_proof);
      ok = proof.has_value();
      if (ok) r.nonce.assign(*proof);
      break;
    }
    case Opcode::set:
      ok = key() && value(r.value);
      break;
    case Opcode::get: {
      ok = key();
      auto t = in.u32();
      ok = ok && t;
      if (ok) r.timeout_ms = *t;
      break;
    }
    case Opcode::add: {
      ok = key();
      auto d = in.i64();
      ok = ok && d;
      if (ok) r.delta = *d;
      break;
    }
    case Opcode::check:
      ok = keys();
      break;
    case Opcode::wait:
    case Opcode::get_all: {
      ok = keys();
      auto t = in.u32();
      ok = ok && t;
      if (ok) r.timeout_ms = *t;
      break;
    }
    case Opcode::erase:
      ok = key();
      break;
    case Opcode::compare_set:
      ok = key() && value(r.value) && value(r.desired);
      break;
    case Opcode::last_will:
      ok = key() && value(r.value);
      break;
    case Opcode::clear_last_will:
    case Opcode::heartbeat:
    case Opcode::clock:
      ok = true;
      break;
    case Opcode::identify:
      ok = key();
      break;
    case Opcode::silent: {
      auto t = in.u32();
      ok = t.has_value();
      if (ok) r.timeout_ms = *t;
      break;
    }
  }
  if (!ok || !in.at_end()) {
    why = "malformed request or over a size limit";
    return std::nullopt;
  }
  return r;
}

bool same_token(std::string_view a, std::string_view b) {
  // Every byte of the longer string is looked at, whatever differs first.
  std::size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

}  // namespace aml::store
