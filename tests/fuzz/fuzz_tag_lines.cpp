// libFuzzer target over console tagging: the block-wise tagging (AVX2) gives exactly what the
// line-by-line one gives, for any bytes, tag and room, and reads and writes nothing outside
// the input and the `room` bytes given (both are exactly sized allocations here, so
// AddressSanitizer sees a byte too far).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/tag_lines.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size < 2) return 0;
  // The first byte picks the tag's length (past the 16 bytes of the block-wise stores too),
  // the second the room; the tag's bytes come next, the lines are the rest.
  const std::size_t tag_size = std::min<std::size_t>(bytes[0] % 20, size - 2);
  const std::size_t room = 1 + bytes[1] * 16;
  const std::string tag(reinterpret_cast<const char*>(bytes) + 2, tag_size);
  const std::string_view lines(reinterpret_cast<const char*>(bytes) + 2 + tag_size,
                               size - 2 - tag_size);
  std::vector<char> got(room), want(room);
  aml::TaggedLines a = aml::tag_lines(lines, tag, got.data(), room);
  aml::TaggedLines b = aml::tag_lines_one_by_one(lines, tag, want.data(), room);
  if (a.consumed != b.consumed || a.written != b.written) __builtin_trap();
  if (std::memcmp(got.data(), want.data(), a.written) != 0) __builtin_trap();
  return 0;
}
