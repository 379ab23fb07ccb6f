// The progress API's cost (DESIGN §6): aml::progress() with the launcher's page mapped (one
// atomic add), without a launcher (nothing to do), against the cheapest system call a worker
// could use to show progress instead (a one-byte write to /dev/null).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <aml/rank.hpp>
#include <chrono>
#include <cstdlib>
#include <string>

#include "progress/progress_page.hpp"
#include "supervisor/hang_watch.hpp"

namespace {

// The page as the launcher makes it, named in the environment before the first call.
aml::HangWatch& launcher_page() {
  static aml::HangWatch watch(std::chrono::seconds(60), std::chrono::seconds(600));
  static const int fd = [] {
    int made = watch.add_worker();
    setenv(aml::kProgressFdVariable, std::to_string(made).c_str(), 1);
    return made;
  }();
  (void)fd;
  return watch;
}

void BM_ProgressWithLauncher(benchmark::State& state) {
  launcher_page();
  std::int64_t step = 0;
  for (auto _ : state) aml::progress(++step);
  state.counters["calls_seen_by_launcher"] = static_cast<double>(step);
}
BENCHMARK(BM_ProgressWithLauncher);

void BM_WriteOneByteToDevNull(benchmark::State& state) {
  int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  for (auto _ : state) benchmark::DoNotOptimize(write(fd, "\n", 1));
  close(fd);
}
BENCHMARK(BM_WriteOneByteToDevNull);

}  // namespace

BENCHMARK_MAIN();
