#include "store/relay/relay_wire.hpp"

#include <algorithm>

namespace aml::store::relay {
namespace {

std::uint32_t u32_at(std::string_view bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return v;
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_header(std::string& out, Kind kind, std::uint32_t stream, std::uint32_t length) {
  out.push_back(static_cast<char>(kind));
  put_u32(out, stream);
  put_u32(out, length);
}

Decoded bad(std::string why) {
  Decoded d;
  d.outcome = Outcome::bad;
  d.why = std::move(why);
  return d;
}

}  // namespace

std::string hello() {
  std::string out(kHelloMagic);
  out.push_back(static_cast<char>(kVersion & 0xff));
  out.push_back(static_cast<char>(kVersion >> 8));
  return out;
}

bool starts_like_hello(std::string_view bytes) {
  return !bytes.empty() && bytes.front() == kHelloMagic.front();
}

Decoded decode_hello(std::string_view bytes) {
  const std::size_t seen = std::min(bytes.size(), kHelloMagic.size());
  if (bytes.substr(0, seen) != kHelloMagic.substr(0, seen)) {
    return bad("not a relay's hello");
  }
  if (bytes.size() < kHelloSize) return {};
  const unsigned version = static_cast<unsigned char>(bytes[8]) |
                           static_cast<unsigned>(static_cast<unsigned char>(bytes[9])) << 8;
  if (version != kVersion) {
    return bad("relay protocol version " + std::to_string(version) + " (this launcher speaks " +
               std::to_string(kVersion) + ": every node must run the same aml-launch)");
  }
  Decoded d;
  d.outcome = Outcome::frame;
  d.used = kHelloSize;
  return d;
}

Decoded decode(std::string_view bytes) {
  if (bytes.empty()) return {};
  const auto kind = static_cast<Kind>(bytes[0]);
  if (kind != Kind::data && kind != Kind::close) {
    return bad("relay frame kind " + std::to_string(static_cast<unsigned char>(bytes[0])));
  }
  if (bytes.size() < kHeaderSize) return {};
  const std::uint32_t length = u32_at(bytes, 5);
  if (kind == Kind::close && length != 0) return bad("a relay's close frame with bytes");
  if (length > kMaxData) {
    return bad("a relay frame of " + std::to_string(length) + " bytes (at most " +
               std::to_string(kMaxData) + ")");
  }
  if (bytes.size() - kHeaderSize < length) return {};
  Decoded d;
  d.outcome = Outcome::frame;
  d.kind = kind;
  d.stream = u32_at(bytes, 1);
  d.data = bytes.substr(kHeaderSize, length);
  d.used = kHeaderSize + length;
  return d;
}

void put_open(std::string& out, std::uint32_t stream) { put_header(out, Kind::data, stream, 0); }

void put_data(std::string& out, std::uint32_t stream, std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t piece = std::min<std::size_t>(bytes.size(), kMaxData);
    put_header(out, Kind::data, stream, static_cast<std::uint32_t>(piece));
    out.append(bytes.substr(0, piece));
    bytes.remove_prefix(piece);
  }
}

void put_close(std::string& out, std::uint32_t stream) { put_header(out, Kind::close, stream, 0); }

}  // namespace aml::store::relay
