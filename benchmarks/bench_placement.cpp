// The cost of --bind's placement: reading a machine's layout from /sys (a copy of an 8-GPU,
// 2-socket node's, and this machine's own) and placing 8 ranks on it. Paid once per launch.
// usage: bench_placement MACHINE_ROOT   (a tree written by tests/fixtures/machines)
#include <benchmark/benchmark.h>

#include <numeric>

#include "placement/placement.hpp"

namespace {

std::string g_root;

aml::PlacementRequest eight_ranks(aml::BindMode mode) {
  aml::PlacementRequest request;
  request.mode = mode;
  request.local_world_size = 8;
  request.local_ranks.resize(8);
  std::iota(request.local_ranks.begin(), request.local_ranks.end(), 0);
  return request;
}

void ReadLayoutFixture(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(aml::read_machine_layout(g_root));
}
BENCHMARK(ReadLayoutFixture)->Unit(benchmark::kMicrosecond);

void ReadLayoutThisMachine(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(aml::read_machine_layout("/"));
}
BENCHMARK(ReadLayoutThisMachine)->Unit(benchmark::kMicrosecond);

void PlaceEightRanks(benchmark::State& state) {
  const auto machine = aml::read_machine_layout(g_root);
  const auto mode = static_cast<aml::BindMode>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(aml::place_ranks(*machine, eight_ranks(mode)));
  state.SetLabel(aml::to_string(mode));
}
BENCHMARK(PlaceEightRanks)
    ->Arg(static_cast<int>(aml::BindMode::automatic))
    ->Arg(static_cast<int>(aml::BindMode::exclusive))
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc < 2) {
    fprintf(stderr, "usage: bench_placement MACHINE_ROOT\n");
    return 2;
  }
  g_root = argv[1];
  if (!aml::read_machine_layout(g_root)) {
    fprintf(stderr, "bench_placement: %s is not a machine root\n", argv[1]);
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
