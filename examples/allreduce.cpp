// Every rank contributes its rank, one allreduce sums them, every rank checks the sum, and
// the master prints it with the times. Runs under aml-launch, mpirun, or any scheduler.
//   aml-launch --nproc-per-node 4 -- build/examples/allreduce [--backend gloo|mpi|nccl]
#include <aml/comm.hpp>
#include <aml/rank.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  aml::comm::InitOptions options;
  std::size_t count = 1024;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      auto backend = aml::comm::parse_backend(argv[++i]);
      if (!backend) {
        std::fprintf(stderr, "allreduce: %s\n", backend.error().message().c_str());
        return 2;
      }
      options.backend = *backend;
    } else if (std::strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
      count = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: allreduce [--backend gloo|mpi|nccl] [--count N]\n");
      return 2;
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  auto comm = aml::comm::init(options);
  if (!comm) {
    std::fprintf(stderr, "allreduce: rank %d: %s\n", aml::rank(), comm.error().message().c_str());
    return 1;
  }
  const auto ready = Clock::now();
  const int rank = (*comm)->rank(), size = (*comm)->size();
  std::vector<double> values(count, static_cast<double>(rank));
  auto reduced = (*comm)->allreduce_sum(values.data(), values.size(), aml::comm::DataType::f64);
  const auto done = Clock::now();
  if (!reduced) {
    std::fprintf(stderr, "allreduce: rank %d: %s\n", rank, reduced.error().message().c_str());
    return 1;
  }
  const double expected = size * (size - 1) / 2.0;
  for (double v : values) {
    if (v != expected) {
      std::fprintf(stderr, "allreduce: rank %d: got %g, expected %g\n", rank, v, expected);
      return 1;
    }
  }
  if (aml::is_master()) {
    auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::printf(
        "allreduce of ranks 0..%d over %s: sum = %g (expected %g): ok, init %.1f ms, "
        "allreduce %.2f ms\n",
        size - 1, std::string(aml::comm::to_string((*comm)->backend())).c_str(), values[0],
        expected, ms(ready - started), ms(done - ready));
  }
  return 0;
}
