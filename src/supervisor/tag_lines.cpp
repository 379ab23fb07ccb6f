#include "supervisor/tag_lines.hpp"

#include <cstdint>
#include <cstring>

// Block-wise tagging: AVX2 on x86 CPUs that have it, NEON on aarch64 (every ARMv8-A CPU has
// it); the line-by-line way elsewhere and for what is left. AML_SIMD_TAGGING=OFF (CMake) builds
// the line-by-line way alone, to measure what the block-wise one adds: 1.07x the relay's time
// for 100-byte lines, 1.3x for 12-byte ones (benchmarks/tagging_path.py, on x86).
#ifndef AML_SIMD_TAGGING
#define AML_SIMD_TAGGING 1
#endif
#if defined(__x86_64__) && AML_SIMD_TAGGING
#define AML_TAG_AVX2 1
#else
#define AML_TAG_AVX2 0
#endif
#if defined(__aarch64__) && AML_SIMD_TAGGING
#define AML_TAG_NEON 1
#else
#define AML_TAG_NEON 0
#endif

#if AML_TAG_AVX2
#include <immintrin.h>

#include "util/cpu_features.hpp"
#endif
#if AML_TAG_NEON
#include <arm_neon.h>
#endif

namespace aml {

TaggedLines tag_lines_one_by_one(std::string_view lines, std::string_view tag, char* out,
                                 std::size_t room) {
  TaggedLines done;
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

#if AML_TAG_AVX2
namespace {

// 32 bytes at a time, no loop per line: each block is stored where it goes after the tags
// so far, and at each newline in it the tag and the rest of the block are stored again,
// further on by one tag. Later stores overwrite what earlier ones put past their line, so the
// output is right up to the last newline. One memchr and two memcpy per line make a chain
// where each line waits for the one before; this does not, and is 1.5x (100-byte lines) to 6x
// (short lines) faster.
//
// Reads stay inside `lines` (a block and what follows a newline in it: 64 bytes), writes
// inside `room` (a block full of newlines moves the rest 32 tags on); a 16-byte tag store
// needs a tag of at most 16 bytes.
__attribute__((target("avx2,bmi"))) TaggedLines tag_blocks_avx2(std::string_view lines,
                                                                std::string_view tag, char* out,
                                                                std::size_t room) {
  constexpr std::size_t kBlock = 32;
  alignas(16) char tag16[16] = {};
  std::memcpy(tag16, tag.data(), tag.size());
  const __m128i tag_bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(tag16));
  const __m256i newline = _mm256_set1_epi8('\n');
  const char* in = lines.data();
  const std::size_t n = lines.size();
  const std::size_t worst_block_growth = 2 * kBlock + kBlock * tag.size();

  TaggedLines done;
  std::size_t shift = tag.size();  // where an input byte goes = its offset + shift
  std::size_t newlines = 0;
  if (room < shift + worst_block_growth) return done;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), tag_bytes);
  for (std::size_t i = 0; i + 2 * kBlock <= n && i + shift + worst_block_growth <= room;
       i += kBlock) {
    __m256i block = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + shift), block);
    auto mask = static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(block, newline)));
    while (mask != 0) {
      std::size_t next_line = i + static_cast<std::size_t>(__builtin_ctz(mask)) + 1;
      mask &= mask - 1;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + next_line + shift), tag_bytes);
      shift += tag.size();
      ++newlines;
      done.consumed = next_line;
      __m256i rest = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + next_line));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + next_line + shift), rest);
    }
  }
  done.written = done.consumed + newlines * tag.size();
  return done;
}

bool cpu_has_avx2() {
  static const bool has = cpu_has_avx2_bmi();
  return has;
}

}  // namespace
#endif

#if AML_TAG_NEON
namespace {

// The block-wise way of tag_blocks_avx2 (above) in 16-byte NEON blocks. NEON has no movemask:
// narrowing the comparison by 4 bits per byte gives a 64-bit mask, a nibble per byte.
TaggedLines tag_blocks_neon(std::string_view lines, std::string_view tag, char* out,
                            std::size_t room) {
  constexpr std::size_t kBlock = 16;
  alignas(16) std::uint8_t tag16[16] = {};
  std::memcpy(tag16, tag.data(), tag.size());
  const uint8x16_t tag_bytes = vld1q_u8(tag16);
  const uint8x16_t newline = vdupq_n_u8('\n');
  const auto* in = reinterpret_cast<const std::uint8_t*>(lines.data());
  auto* to = reinterpret_cast<std::uint8_t*>(out);
  const std::size_t n = lines.size();
  const std::size_t worst_block_growth = 2 * kBlock + kBlock * tag.size();

  TaggedLines done;
  std::size_t shift = tag.size();
  std::size_t newlines = 0;
  if (room < shift + worst_block_growth) return done;
  vst1q_u8(to, tag_bytes);
  for (std::size_t i = 0; i + 2 * kBlock <= n && i + shift + worst_block_growth <= room;
       i += kBlock) {
    uint8x16_t block = vld1q_u8(in + i);
    vst1q_u8(to + i + shift, block);
    const uint8x8_t nibbles = vshrn_n_u16(vreinterpretq_u16_u8(vceqq_u8(block, newline)), 4);
    std::uint64_t mask = vget_lane_u64(vreinterpret_u64_u8(nibbles), 0) & 0x1111111111111111ull;
    while (mask != 0) {
      std::size_t next_line = i + static_cast<std::size_t>(__builtin_ctzll(mask)) / 4 + 1;
      mask &= mask - 1;
      vst1q_u8(to + next_line + shift, tag_bytes);
      shift += tag.size();
      ++newlines;
      done.consumed = next_line;
      vst1q_u8(to + next_line + shift, vld1q_u8(in + next_line));
    }
  }
  done.written = done.consumed + newlines * tag.size();
  return done;
}

}  // namespace
#endif

TaggedLines tag_lines(std::string_view lines, std::string_view tag, char* out, std::size_t room) {
  TaggedLines done;
#if AML_TAG_AVX2
  if (tag.size() <= 16 && cpu_has_avx2()) done = tag_blocks_avx2(lines, tag, out, room);
#elif AML_TAG_NEON
  if (tag.size() <= 16) done = tag_blocks_neon(lines, tag, out, room);
#endif
  TaggedLines rest = tag_lines_one_by_one(lines.substr(done.consumed), tag, out + done.written,
                                          room - done.written);
  return {done.consumed + rest.consumed, done.written + rest.written};
}

}  // namespace aml
