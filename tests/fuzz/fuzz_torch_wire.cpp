// libFuzzer target over torch's store protocol decoder (the workers' door): whatever bytes a
// client sends, in whatever pieces, decoding neither crashes, nor reads out of bounds, nor takes
// a request that breaks a limit, nor stalls on bytes that hold a whole request.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "store/torch/torch_wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the piece size the stream arrives in.
  const std::size_t piece = 1 + bytes[0] % 64;
  std::string_view stream(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  aml::store::torch::Limits limits;
  limits.max_key = 64;
  limits.max_value = 256;
  limits.max_keys = 8;
  limits.max_request = 1024;
  using aml::store::torch::Outcome;
  aml::store::torch::Dialect dialect = aml::store::torch::Dialect::legacy;
  bool first = true;
  std::string buffer;
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    buffer.append(stream.substr(at, piece));
    for (;;) {
      auto d = aml::store::torch::decode(buffer, dialect, first, limits);
      if (d.outcome == Outcome::bad) {
        if (d.why.empty()) __builtin_trap();
        return 0;  // the server closes the connection
      }
      if (d.outcome == Outcome::need_more) {
        if (buffer.size() > limits.max_request + 16) __builtin_trap();  // it would never end
        break;
      }
      if (d.used == 0 || d.used > buffer.size()) __builtin_trap();
      for (const auto& key : d.request.keys) {
        if (key.size() > limits.max_key) __builtin_trap();
      }
      for (const auto& value : d.request.values) {
        if (value.size() > limits.max_value) __builtin_trap();
      }
      if (d.request.keys.size() > limits.max_keys + 1) __builtin_trap();
      dialect = d.dialect;
      first = false;
      buffer.erase(0, d.used);
    }
  }
  return 0;
}
