// aml-preflight: what `aml-launch --preflight` runs on every rank before the user's command.
// Every rank joins a communicator and runs allreduce from 8 B to 64 MiB, checks every value,
// and rank 0 prints a table in nccl-tests' terms, naming any rank that is wrong or slower
// than the rest. Exit 0 only when all is well (and busbw reaches --min-busbw).
//   usage: aml-preflight [--backend gloo|mpi|nccl] [--min-busbw GBPS] [--max BYTES]
// AML_PREFLIGHT_FAULT=wrong:R or slow:R makes rank R see a wrong value or take longer, to
// watch the preflight catch and name it; AML_PREFLIGHT_MAX_BYTES lowers the largest size.
#include <algorithm>
#include <aml/comm.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// A rank this much slower than the median rank (at 1 MiB and above) is named.
constexpr double kSlowFactor = 1.5;
constexpr std::size_t kSlowFrom = 1u << 20;

struct Options {
  aml::comm::InitOptions init;
  double min_busbw = 0;  // GB/s at the largest size; 0: no floor
  std::size_t max_bytes = 64u << 20;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--backend") && i + 1 < argc) {
      auto b = aml::comm::parse_backend(argv[++i]);
      if (!b) return false;
      o.init.backend = *b;
    } else if (!std::strcmp(argv[i], "--min-busbw") && i + 1 < argc) {
      o.min_busbw = std::strtod(argv[++i], nullptr);
    } else if (!std::strcmp(argv[i], "--max") && i + 1 < argc) {
      o.max_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else {
      return false;
    }
  }
  return o.max_bytes >= 8;
}

// Every rank's value, in rank order (an allreduce of one-hot vectors: the backends all
// have allreduce).
std::vector<double> gather(aml::comm::Communicator& comm, double mine, bool& ok) {
  std::vector<double> all(static_cast<std::size_t>(comm.size()), 0.0);
  all[static_cast<std::size_t>(comm.rank())] = mine;
  ok = ok && comm.allreduce_sum(all.data(), all.size(), aml::comm::DataType::f64).ok();
  return all;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

std::string human(std::size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(
        stderr,
        "usage: aml-preflight [--backend gloo|mpi|nccl] [--min-busbw GBPS] [--max BYTES]\n");
    return 2;
  }
  if (const char* max = std::getenv("AML_PREFLIGHT_MAX_BYTES"); max != nullptr && *max) {
    o.max_bytes = std::strtoull(max, nullptr, 10);
    if (o.max_bytes < 8) {
      std::fprintf(stderr, "aml-preflight: AML_PREFLIGHT_MAX_BYTES=%s: expected 8 or more\n", max);
      return 2;
    }
  }
  o.init.name = "preflight";
  auto made = aml::comm::init(o.init);
  if (!made) {
    std::fprintf(stderr, "aml-preflight: %s\n", made.error().message().c_str());
    return 1;
  }
  aml::comm::Communicator& comm = **made;
  const int n = comm.size(), me = comm.rank();
  const bool leader = me == 0;
  const double bus_factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  if (leader) {
    std::printf("aml-preflight: allreduce over %d ranks (%s), float32 sums, every value checked\n",
                n, std::string(aml::comm::to_string(comm.backend())).c_str());
    std::printf("%12s %10s %12s %12s %12s %8s\n", "size", "count", "time(us)", "algbw(GB/s)",
                "busbw(GB/s)", "#wrong");
  }
  // Fault injection (see the top): which rank, and how.
  int fault_rank = -1;
  bool fault_slow = false;
  if (const char* fault = std::getenv("AML_PREFLIGHT_FAULT"); fault != nullptr) {
    fault_slow = std::strncmp(fault, "slow:", 5) == 0;
    if (fault_slow || std::strncmp(fault, "wrong:", 6) == 0)
      fault_rank = std::atoi(std::strchr(fault, ':') + 1);
  }
  bool ok = true;
  double last_busbw = 0;
  std::vector<std::string> problems;
  // 8 B, 64 B, ... by factors of 8, and the largest size itself (64 MiB by default).
  for (std::size_t bytes = 8; bytes <= o.max_bytes;
       bytes = bytes < o.max_bytes && bytes * 8 > o.max_bytes ? o.max_bytes : bytes * 8) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> data(count);
    const int rounds = static_cast<int>(std::clamp<std::size_t>((64u << 20) / bytes, 5, 50));
    std::vector<double> times;
    double wrong = 0;
    // Rank r contributes r + 1 + round: exact in float32, different every round.
    for (int round = -2; round < rounds && ok; ++round) {
      std::fill(data.begin(), data.end(), static_cast<float>(me + 1 + round + 2));
      ok = comm.barrier().ok();
      auto start = Clock::now();
      ok = ok && comm.allreduce_sum(data.data(), count, aml::comm::DataType::f32).ok();
      if (me == fault_rank && fault_slow) {
        std::this_thread::sleep_for(2 * (Clock::now() - start) + std::chrono::milliseconds(2));
      } else if (me == fault_rank) {
        data[count / 2] += 1;
      }
      double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      const float expected = static_cast<float>(n * (n + 1) / 2 + n * (round + 2));
      wrong += static_cast<double>(
          std::count_if(data.begin(), data.end(), [&](float v) { return v != expected; }));
      if (round >= 0) times.push_back(seconds);
    }
    if (!ok) break;
    const double mine = median(times);
    std::vector<double> per_rank = gather(comm, mine, ok);
    std::vector<double> wrong_per_rank = gather(comm, wrong, ok);
    if (!ok) break;
    const double t = median(per_rank);
    const double algbw = bytes / t / 1e9, busbw = algbw * bus_factor;
    double total_wrong = 0;
    for (double w : wrong_per_rank) total_wrong += w;
    last_busbw = busbw;
    if (!leader) continue;
    std::printf("%12s %10zu %12.1f %12.3f %12.3f %8.0f\n", human(bytes).c_str(), count, t * 1e6,
                algbw, busbw, total_wrong);
    for (int r = 0; r < n; ++r) {
      if (wrong_per_rank[r] > 0)
        problems.push_back("rank " + std::to_string(r) + " got " +
                           std::to_string(static_cast<long>(wrong_per_rank[r])) +
                           " wrong values at " + human(bytes));
      if (bytes >= kSlowFrom && per_rank[r] > kSlowFactor * t) {
        char line[160];
        std::snprintf(line, sizeof line,
                      "rank %d is slower than the rest at %s: %.1f us, median %.1f us", r,
                      human(bytes).c_str(), per_rank[r] * 1e6, t * 1e6);
        problems.push_back(line);
      }
    }
  }
  if (!ok) {
    std::fprintf(stderr,
                 "aml-preflight: rank %d: a collective failed; the communicator is broken\n", me);
    return 1;
  }
  // Every rank learns the verdict, so that every rank exits with it.
  double failed = 0;
  if (leader) {
    for (const std::string& p : problems) std::printf("aml-preflight: %s\n", p.c_str());
    bool wrong_values = std::any_of(problems.begin(), problems.end(), [](const std::string& p) {
      return p.find("wrong") != std::string::npos;
    });
    if (o.min_busbw > 0 && last_busbw < o.min_busbw) {
      std::printf("aml-preflight: busbw %.3f GB/s at %s is below --preflight-min-busbw %.3f\n",
                  last_busbw, human(o.max_bytes).c_str(), o.min_busbw);
      failed = 1;
    }
    if (wrong_values) failed = 1;
    std::printf("aml-preflight: %s\n", failed ? "FAILED" : "passed");
    std::fflush(stdout);
  }
  std::vector<double> verdict = gather(comm, failed, ok);
  return ok && verdict[0] == 0 ? 0 : 1;
}
