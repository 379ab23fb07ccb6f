// What one node's launcher says about itself when it joins a round of the rendezvous, and the
// check that every node agrees on the job (DESIGN §5).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace aml {

// One member of the job's group: a node's launcher in a per-node launch, a rank's in a
// per-process one (node_rank is then that rank, and on_node the node it runs on).
struct NodeInfo {
  int node_rank = 0;  // its index in the group
  std::string host;   // its host name, for people
  std::string addr;   // its address as the other nodes reach it
  long pid = 0;       // its launcher's: two launchers claiming one node rank differ at least here
  int nnodes = 1;
  int nproc_per_node = 1;
  std::string run_id;
  std::string version;  // the launcher's
  int max_restarts = 0;
  std::vector<int> tf_ports;  // --framework tensorflow: one free port per local worker
  int on_node = -1;           // a per-process launch: the node it runs on; -1: node_rank
  // Its health checks' first failure this round ("gpu: GPU 1: ..."), "" when healthy: a node
  // that fails is never seated (DESIGN §5).
  std::string health;
  // The scheduler's name for its machine (SLURMD_NODENAME, Kubernetes' NODE_NAME, Azure's
  // AZ_BATCH_NODE_ID), "" where none: what a bench is fed back to the scheduler with, and
  // how a launcher started again on a benched machine is known.
  std::string machine;
  double nic_gbps = 0;  // its slowest InfiniBand/RoCE port's rate (the nic check), 0: none

  bool per_process() const { return on_node >= 0; }
  int node() const { return per_process() ? on_node : node_rank; }
  std::string describe() const;  // "node 2 (host c)", "rank 5 (node 1, host c)"
};

std::string to_json(const NodeInfo& info);
std::optional<NodeInfo> node_info_from_json(const std::string& text);

// Why the nodes cannot run one job together ("the nodes disagree on processes per node:
// node 0 (a) and node 1 (b) have 2, node 2 (c) has 4"), or nullopt when they agree.
std::optional<std::string> disagreement(const std::vector<NodeInfo>& nodes);

// Why a node waiting for a seat in a running elastic job cannot join it (as disagreement()
// says it, its node count aside), or nullopt.
std::optional<std::string> newcomer_disagreement(const NodeInfo& member, NodeInfo newcomer);

// The nodes whose slowest port is slower than the fastest node's: "node 2 (c) at 10.0.0.3:
// 100 Gb/s (the others' slowest port: 400 Gb/s)", or "" (every node alike, or no nic check).
std::string slower_ports(const std::vector<NodeInfo>& nodes);

// Node ranks in [0, nnodes) that are not in `present`, as "2, 5 and 7".
std::string missing_node_ranks(int nnodes, const std::vector<int>& present);

}  // namespace aml
