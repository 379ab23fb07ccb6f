#include "supervisor/tag_lines.hpp"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace aml {
namespace {

// One line at a time with exact copies: the last lines of a buffer, long tags, other CPUs.
TaggedLines tag_lines_exactly(std::string_view lines, std::string_view tag, char* out,
                              std::size_t room, TaggedLines done) {
  while (done.consumed < lines.size()) {
    const char* line = lines.data() + done.consumed;
    const void* newline = std::memchr(line, '\n', lines.size() - done.consumed);
    if (newline == nullptr) break;  // not a whole line (callers pass whole lines only)
    auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - line) + 1;
    if (room - done.written < tag.size() + length) break;
    std::memcpy(out + done.written, tag.data(), tag.size());
    std::memcpy(out + done.written + tag.size(), line, length);
    done.consumed += length;
    done.written += tag.size() + length;
  }
  return done;
}

#if defined(__SSE2__)
using Block = __m128i;
inline Block load(const char* p) { return _mm_loadu_si128(reinterpret_cast<const Block*>(p)); }
inline void store(char* p, Block b) { _mm_storeu_si128(reinterpret_cast<Block*>(p), b); }

// Bit i set where p[i] is a newline, for 64 bytes.
inline std::uint64_t newlines_in_64(const char* p) {
  const Block newline = _mm_set1_epi8('\n');
  auto bits = [&](int at) {
    return std::uint64_t{
        static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(load(p + at), newline)))};
  };
  return bits(0) | bits(16) << 16 | bits(32) << 32 | bits(48) << 48;
}
#endif

}  // namespace

TaggedLines tag_lines(std::string_view lines, std::string_view tag, char* out, std::size_t room) {
  TaggedLines done;
#if defined(__SSE2__)
  // Newlines are found 64 bytes at a time (no call per line); a line of up to 128 bytes is
  // moved by eight 16-byte loads and stores whatever its length, so that short lines cost no
  // loop and no branch of their own. The stores may run past the line: the next tag and line
  // overwrite that, and the room check keeps it inside `out`.
  constexpr std::size_t kShortLine = 128;
  constexpr std::size_t kTagBlock = 32;
  if (tag.size() <= kTagBlock) {
    alignas(16) char padded_tag[kTagBlock] = {};
    std::memcpy(padded_tag, tag.data(), tag.size());
    const Block tag_low = load(padded_tag), tag_high = load(padded_tag + 16);
    const char* const in = lines.data();
    const std::size_t size = lines.size();
    // The fast path reads kShortLine bytes from a line's start: not in the last ones.
    const std::size_t fast_until = size >= kShortLine ? size - kShortLine : 0;
    std::size_t line_start = 0;
    char* o = out;
    for (std::size_t chunk = 0; chunk + 64 <= size && line_start < fast_until; chunk += 64) {
      std::uint64_t mask = newlines_in_64(in + chunk);
      while (mask != 0) {
        const std::size_t newline = chunk + static_cast<std::size_t>(__builtin_ctzll(mask));
        mask &= mask - 1;
        const std::size_t length = newline + 1 - line_start;
        const auto left = static_cast<std::size_t>(out + room - o);
        if (line_start >= fast_until || left < tag.size() + kTagBlock + kShortLine + length) {
          return tag_lines_exactly(lines, tag, out, room, done);
        }
        const char* p = in + line_start;
        store(o, tag_low);
        store(o + 16, tag_high);
        o += tag.size();
        if (length <= kShortLine) {
          // All loads before any store: the compiler cannot know that `o` and the input do
          // not overlap, and interleaved they would wait on each other.
          const Block a = load(p), b = load(p + 16), c = load(p + 32), d = load(p + 48),
                      e = load(p + 64), f = load(p + 80), g = load(p + 96), h = load(p + 112);
          store(o, a), store(o + 16, b), store(o + 32, c), store(o + 48, d);
          store(o + 64, e), store(o + 80, f), store(o + 96, g), store(o + 112, h);
        } else {
          std::memcpy(o, p, length);
        }
        o += length;
        line_start = newline + 1;
        done.consumed = line_start;
        done.written = static_cast<std::size_t>(o - out);
      }
    }
  }
#endif
  return tag_lines_exactly(lines, tag, out, room, done);
}

}  // namespace aml
