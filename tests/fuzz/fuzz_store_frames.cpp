// libFuzzer target over the store's frame decoder and request parser: whatever bytes a client
// sends, in whatever pieces, the server's decoding neither crashes nor reads out of bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "store/launchers/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the piece size the stream arrives in.
  const std::size_t piece = 1 + bytes[0] % 64;
  std::string_view stream(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  aml::store::Limits limits;
  limits.max_frame = 4096;
  limits.max_key = 64;
  limits.max_value = 256;
  limits.max_wait_keys = 8;
  aml::store::FrameDecoder decoder(limits.max_frame);
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    decoder.feed(stream.substr(at, piece));
    while (auto body = decoder.next()) {
      std::string why;
      auto request = aml::store::parse_request(*body, limits, why);
      if (request) {
        for (const auto& key : request->keys) {
          if (key.empty() || key.size() > limits.max_key) __builtin_trap();
        }
        if (request->value.size() > limits.max_value) __builtin_trap();
      } else if (why.empty()) {
        __builtin_trap();
      }
    }
    if (decoder.error()) break;
  }
  return 0;
}
