#include "supervisor/tag_lines.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "util/cpu_features.hpp"

namespace aml {
namespace {

std::string tagged_naively(std::string_view lines, std::string_view tag) {
  std::string out;
  std::size_t start = 0;
  while (start < lines.size()) {
    std::size_t end = lines.find('\n', start) + 1;
    out.append(tag).append(lines.substr(start, end - start));
    start = end;
  }
  return out;
}

// Lines of random lengths (empty ones, short ones, some of hundreds of bytes), with
// every byte value but the newline inside them.
std::string random_lines(std::mt19937& random, std::size_t count) {
  std::string lines;
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t length = random() % 8 == 0 ? random() % 400 : random() % 130;
    for (std::size_t j = 0; j < length; ++j) {
      char c = static_cast<char>(random() % 256);
      lines.push_back(c == '\n' ? 'x' : c);
    }
    lines.push_back('\n');
  }
  return lines;
}

using TagFunction = TaggedLines (*)(std::string_view, std::string_view, char*, std::size_t);

// Both ways of tagging (the block-wise one where the CPU has AVX2, and the line-by-line one it
// falls back on), against tagging one line at a time.
void expect_tagging_matches_line_by_line(TagFunction tag_function) {
  std::mt19937 random(7);
  for (std::string tag :
       {"", "[rank 3] ", "0123456789abcdef", "[a tag longer than thirty-two bytes] "}) {
    for (int round = 0; round < 50; ++round) {
      std::string lines = random_lines(random, 1 + random() % 300);
      std::string want = tagged_naively(lines, tag);
      // Rooms from too small for one line up to plenty: the caller writes out and goes on.
      std::size_t room = round % 5 == 0 ? 1 + random() % 300 : 1000 + random() % 100000;
      std::vector<char> out(room + 64, '\x7f');
      std::string got;
      std::string_view rest = lines;
      while (!rest.empty()) {
        TaggedLines done = tag_function(rest, tag, out.data(), room);
        for (std::size_t i = room; i < out.size(); ++i)
          ASSERT_EQ(out[i], '\x7f') << "wrote past room";
        if (done.consumed == 0) {
          std::size_t length = rest.find('\n') + 1;
          ASSERT_LT(room, tag.size() + length) << "refused a line that fits";
          got.append(tag).append(rest.substr(0, length));
          rest.remove_prefix(length);
          continue;
        }
        ASSERT_EQ(rest[done.consumed - 1], '\n') << "stopped inside a line";
        got.append(out.data(), done.written);
        rest.remove_prefix(done.consumed);
      }
      ASSERT_EQ(got, want) << "tag '" << tag << "', round " << round;
    }
  }
}

TEST(TagLines, MatchesTaggingLineByLineForAnyTagAndRoom) {
  expect_tagging_matches_line_by_line(tag_lines);
}

TEST(TagLines, OneByOneMatchesTaggingLineByLine) {
  expect_tagging_matches_line_by_line(tag_lines_one_by_one);
}

// Blocks of nothing but newlines, and lines across every block boundary: what moves the
// block-wise tagging's output furthest.
TEST(TagLines, EmptyLinesAndEveryLineLength) {
  for (std::string tag : {"", "T", "[rank 12] ", "0123456789abcdef"}) {
    for (std::size_t length = 0; length < 70; ++length) {
      std::string lines;
      for (int i = 0; i < 40; ++i) lines.append(std::string(length, 'a' + i % 26)).push_back('\n');
      lines.append(std::string(200, '\n'));
      std::string want = tagged_naively(lines, tag);
      std::vector<char> out(want.size() + 64, '\x7f');
      TaggedLines done = tag_lines(lines, tag, out.data(), want.size());
      ASSERT_EQ(done.consumed, lines.size()) << "length " << length;
      ASSERT_EQ(std::string(out.data(), done.written), want) << "length " << length;
      for (std::size_t i = want.size(); i < out.size(); ++i) ASSERT_EQ(out[i], '\x7f');
    }
  }
}

TEST(TagLines, StopsBeforeAPartialLastLine) {
  char out[256];
  TaggedLines done = tag_lines("one\ntwo\nthr", "> ", out, sizeof(out));
  EXPECT_EQ(done.consumed, 8u);
  EXPECT_EQ(std::string(out, done.written), "> one\n> two\n");
}

#if defined(__x86_64__)
// Our own CPUID reading agrees with the compiler's (filled in by gcc's runtime; the portable
// build's runtime leaves it empty, which is why the launcher asks CPUID itself).
TEST(CpuFeatures, Avx2AndBmiAsTheCompilerRuntimeSeesThem) {
  __builtin_cpu_init();
  EXPECT_EQ(cpu_has_avx2_bmi(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi"));
}
#endif

}  // namespace
}  // namespace aml
