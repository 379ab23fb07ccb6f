// The aml::comm side of benchmarks/comm_bench.py. Every rank prints when its communicator is
// ready (wall clock, for the bootstrap time); then, unless --bootstrap-only, rank 0 prints the
// median time of a float32 allreduce for each size from --min to --max bytes (times 4).
//   usage: comm_bench [--backend gloo|mpi|nccl] [--min BYTES] [--max BYTES] [--bootstrap-only]
#include <algorithm>
#include <aml/comm.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  aml::comm::InitOptions options;
  std::size_t min_bytes = 1024, max_bytes = 64u << 20;
  bool bootstrap_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--backend") && i + 1 < argc) {
      auto b = aml::comm::parse_backend(argv[++i]);
      if (!b) return 2;
      options.backend = *b;
    } else if (!std::strcmp(argv[i], "--min") && i + 1 < argc) {
      min_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--max") && i + 1 < argc) {
      max_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--bootstrap-only")) {
      bootstrap_only = true;
    } else {
      return 2;
    }
  }
  auto comm = aml::comm::init(options);
  if (!comm) {
    std::fprintf(stderr, "comm_bench: %s\n", comm.error().message().c_str());
    return 1;
  }
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::printf("ready %.6f\n", now);
  std::fflush(stdout);
  if (bootstrap_only) return 0;
  using Clock = std::chrono::steady_clock;
  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    std::vector<float> data(bytes / sizeof(float), 1.0f);
    // About 256 MiB through each rank per size, 5 to 200 timed rounds, after 3 warm-ups.
    const int rounds = static_cast<int>(std::clamp<std::size_t>((256u << 20) / bytes, 5, 200));
    std::vector<double> seconds;
    for (int r = -3; r < rounds; ++r) {
      if (!(*comm)->barrier()) return 1;
      auto start = Clock::now();
      if (!(*comm)->allreduce_sum(data.data(), data.size(), aml::comm::DataType::f32)) return 1;
      if (r >= 0) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
    if ((*comm)->rank() == 0)
      std::printf("size %zu median_s %.9f\n", bytes, seconds[seconds.size() / 2]);
  }
  return 0;
}
