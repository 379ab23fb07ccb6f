// libFuzzer target over the relay's trunk decoder (relay_wire.hpp), as node 0 and each relay
// read a trunk: a hello, then frames, arriving in whatever pieces. Decoding neither crashes, nor
// reads out of bounds, nor takes a frame over its bound, nor stalls on bytes that hold a whole
// frame; and what put_data wrote decodes to the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "store/relay/relay_wire.hpp"

namespace relay = aml::store::relay;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + bytes[0] % 64;
  std::string_view stream(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  // Written and read back: the input itself as one stream's data.
  std::string written;
  relay::put_data(written, 5, stream);
  std::string back;
  for (std::string_view rest = written; !rest.empty();) {
    relay::Decoded d = relay::decode(rest);
    if (d.outcome != relay::Outcome::frame || d.stream != 5) __builtin_trap();
    back.append(d.data);
    rest.remove_prefix(d.used);
  }
  if (back != stream) __builtin_trap();
  // Read as a trunk.
  std::string buffer;
  bool greeted = false;
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    buffer.append(stream.substr(at, piece));
    for (;;) {
      relay::Decoded d = greeted ? relay::decode(buffer) : relay::decode_hello(buffer);
      if (d.outcome == relay::Outcome::bad) {
        if (d.why.empty()) __builtin_trap();
        return 0;  // the trunk closes
      }
      if (d.outcome == relay::Outcome::need_more) {
        if (buffer.size() >= relay::kHeaderSize + relay::kMaxData) __builtin_trap();
        break;
      }
      if (d.used == 0 || d.used > buffer.size() || d.data.size() > relay::kMaxData) {
        __builtin_trap();
      }
      greeted = true;
      buffer.erase(0, d.used);
    }
  }
  return 0;
}
