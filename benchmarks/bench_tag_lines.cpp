// Tagging console lines ("[rank N] " before each): the launcher's hot loop when several
// workers share the console. The block-wise tagging against the line-by-line one it falls
// back on, over 256 KiB of lines (one read's worth) of three length mixes.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "supervisor/tag_lines.hpp"

namespace {

enum class Lengths { kHundredBytes, kMixed20To180, kShort1To12 };

std::string lines_of(Lengths lengths) {
  std::mt19937 random(1);
  std::string lines;
  while (lines.size() < 256 * 1024) {
    std::size_t length = lengths == Lengths::kHundredBytes   ? 100
                         : lengths == Lengths::kMixed20To180 ? 20 + random() % 161
                                                             : 1 + random() % 12;
    lines.append(length - 1, static_cast<char>('a' + random() % 26)).push_back('\n');
  }
  return lines;
}

template <auto TagFunction>
void tag(benchmark::State& state) {
  const std::string lines = lines_of(static_cast<Lengths>(state.range(0)));
  std::vector<char> out(2 * lines.size());
  for (auto _ : state) {
    std::string_view rest = lines;
    while (!rest.empty()) {
      aml::TaggedLines done = TagFunction(rest, "[rank 3] ", out.data(), out.size());
      benchmark::DoNotOptimize(out.data());
      rest.remove_prefix(done.consumed);
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * lines.size()));
}

}  // namespace

// Arguments: 0 = 100-byte lines, 1 = 20 to 180 bytes, 2 = 1 to 12 bytes.
BENCHMARK(tag<aml::tag_lines>)->Name("tag_lines")->DenseRange(0, 2);
BENCHMARK(tag<aml::tag_lines_one_by_one>)->Name("tag_lines_one_by_one")->DenseRange(0, 2);

BENCHMARK_MAIN();
