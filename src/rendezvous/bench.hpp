// The bench (DESIGN §5, "blame lasts the job"): the nodes an elastic job seats no more while a
// spare or MIN allows: one that failed a health check, whose launcher was lost, or whose rank
// failed first in --bench-after rounds. It travels in each round's seats record (node 0's store
// or etcd alike: under etcd it outlives any node), so whoever gives the next seats has it.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace aml {

struct BenchedNode {
  long launcher = -1;   // the job's number for its launcher
  std::string host;     // its host name
  std::string addr;     // its address as the others reach it
  std::string machine;  // the scheduler's name for it (Slurm, Kubernetes, Azure), or ""
  int node_rank = -1;   // the last it held (-1: never seated)
  std::string reason;   // "failed its health check", "its launcher was lost", ...
  std::string figure;   // what was seen: "gpu: GPU 1: ...", the failure
  std::string time;     // UTC, when it was benched
  int round = 0;        // the round it was benched before
  long pid = 0;         // its launcher's pid on its host (0: not known): with the host, the
                        // launcher's row in `aml-launch report`
};

// In the order people read it (--bad-nodes-file, the summary, the seats' record).
nlohmann::ordered_json bench_json(const BenchedNode& node);
std::optional<BenchedNode> benched_from_json(const nlohmann::json& j);
std::vector<BenchedNode> bench_from_json(const nlohmann::json& list);

// Whether a launcher that came is the benched node: the same launcher, or one started again on
// the same machine (the scheduler's name for it, else its address where that is not loopback:
// several simulated nodes on one host share 127.0.0.1).
bool same_node(const BenchedNode& benched, long launcher, const std::string& addr,
               const std::string& machine);

// The bench as people read it: a line each, then what each scheduler takes to keep them out
// ("srun --exclude=h1,h2", Kubernetes' node names for a taint, Azure's node ids).
std::string bench_text(const std::vector<BenchedNode>& bench);

}  // namespace aml

namespace aml {

// What the launcher giving a round's seats knows of the bench: the last round's, and who it
// benches now (each once, by launcher).
struct BenchBook {
  std::vector<BenchedNode> bench;
  std::map<long, int> first_failures;  // by launcher: rounds its rank failed first
  std::vector<BenchedNode> added;      // benched for this round
  std::set<long> seated_last;          // the last round's members (a benched one: seated at MIN)
  const BenchedNode* find(long launcher, const std::string& addr, const std::string& machine) const;
  // Benches it (round stamped) unless its launcher is benched already; one benched before
  // that the last round seated again (the job would have ended without it) is benched again,
  // for its new reason, and that is news (added).
  void add(BenchedNode node, int round);
};

}  // namespace aml
