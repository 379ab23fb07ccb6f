// Puts a tag before every line: the console's hot loop when several workers share it.
#pragma once

#include <cstddef>
#include <string_view>

namespace aml {

struct TaggedLines {
  std::size_t consumed = 0;  // input bytes done: whole lines only
  std::size_t written = 0;   // output bytes
};

// Copies as many whole lines of `lines` (each ends in '\n') into `out` as fit in `room` bytes,
// each after `tag`. Nothing is consumed when the first line does not fit.
TaggedLines tag_lines(std::string_view lines, std::string_view tag, char* out, std::size_t room);

// The same, one line at a time (memchr, memcpy): what tag_lines does where the CPU has no
// AVX2 (x86) or NEON (aarch64), for a tag over 16 bytes, and for what is left near the ends
// of the buffers.
TaggedLines tag_lines_one_by_one(std::string_view lines, std::string_view tag, char* out,
                                 std::size_t room);

}  // namespace aml
