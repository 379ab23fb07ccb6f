// What the job's node 0 pays at a round's rendezvous for the roster its events name
// (--events-file, --job-events-file): which launchers are new (SeatHistory) and a node_joined
// line each, written in one burst to a file, as launcher/event_setup.cpp does it. Round 0 of a
// job of N nodes (every node new) and a restart round (nobody new: the check alone).
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "events/event_log.hpp"
#include "seat_history.hpp"

namespace {

std::vector<aml::NodeInfo> nodes_of(int count) {
  std::vector<aml::NodeInfo> nodes(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    auto& node = nodes[static_cast<std::size_t>(i)];
    node.node_rank = i;
    node.host = "node-" + std::to_string(i) + ".cluster.internal";
    node.addr = "10." + std::to_string(i / 65536) + "." + std::to_string(i / 256 % 256) + "." +
                std::to_string(i % 256);
    node.pid = 4000 + i;
    node.machine = "vmss_" + std::to_string(i);
  }
  return nodes;
}

struct Folder {
  Folder() {
    char name[] = "/tmp/aml-bench-seats-XXXXXX";
    path = mkdtemp(name);
  }
  ~Folder() { std::filesystem::remove_all(path); }
  std::string path;
};

void write_round(aml::EventLog& log, aml::SeatHistory& seats, int round,
                 const std::vector<aml::NodeInfo>& nodes) {
  aml::EventLog::Burst burst(&log);
  for (aml::SeatNews& news : seats.seated(round, nodes, 0)) {
    log.write(news.kind, std::move(news.details));
  }
}

// Round 0: every other node new, a line each.
void round_zero(benchmark::State& state) {
  const auto nodes = nodes_of(static_cast<int>(state.range(0)));
  Folder folder;
  auto log = aml::EventLog::open(folder.path + "/events.jsonl", {0, "node-0", "run"});
  for (auto _ : state) {
    aml::SeatHistory seats;
    write_round(**log, seats, 0, nodes);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// A restart: the same launchers, nothing to write.
void restart_round(benchmark::State& state) {
  const auto nodes = nodes_of(static_cast<int>(state.range(0)));
  Folder folder;
  auto log = aml::EventLog::open(folder.path + "/events.jsonl", {0, "node-0", "run"});
  aml::SeatHistory seats;
  write_round(**log, seats, 0, nodes);
  int round = 1;
  for (auto _ : state) write_round(**log, seats, round++, nodes);
}

}  // namespace

BENCHMARK(round_zero)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(restart_round)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
