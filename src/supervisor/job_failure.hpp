// The failure that stops a multi-node job, as every node hears of it: which rank on which
// node failed first and how, or which node was lost; or the stop (INT, TERM, HUP) that one
// node's launcher got from outside. It crosses nodes as JSON in the store.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aml {

struct WorkerExit;

struct JobFailure {
  int node_rank = -1;
  // Which member of the job's group reported it (or was lost): the node rank in a per-node
  // launch, the rank in a per-process one (-1: node_rank).
  int member = -1;
  std::string host;
  int rank = -1;  // -1: not a worker's failure (a lost node, a stopped launcher)
  int local_rank = -1;
  long pid = 0;
  int exit_code = 1;    // what every launcher of the job exits with
  int stop_signal = 0;  // not a failure: this node's launcher was stopped by this signal
  std::string status;   // "exit code 7", "signal 9 (SIGKILL)", "launcher lost"
  std::string time;     // UTC, as the failing node saw it
  std::vector<std::string> stderr_tail;
  // Not a failure: an elastic job's node 0 ended the round to admit nodes that came
  // (--admit-newcomers at-once); the next round starts at once and uses no restart.
  bool regroup = false;

  // One line for people: "rank 5 (local rank 1) on node 2 (host c), pid 77, failed first at
  // ...: exit code 7".
  std::string describe() const;
  int member_or_node() const { return member >= 0 ? member : node_rank; }
  // A node's launcher was lost (dead or silent), not one of its workers.
  bool launcher_lost() const { return status.starts_with(kLauncherLost); }
  static constexpr std::string_view kLauncherLost = "its launcher was lost";
  // This node lost the rendezvous itself (node 0's store, or etcd, out of its reach).
  bool rendezvous_lost() const { return status.starts_with(kRendezvousLost); }
  static constexpr std::string_view kRendezvousLost = "the job's rendezvous was lost";
  // A seated node whose health check failed (it ends the round, and is benched).
  bool health_failed() const { return status.starts_with(kHealthFailed); }
  static constexpr std::string_view kHealthFailed = "its health check failed";
};

// A worker's exit on this node as the job hears of it.
JobFailure job_failure_of(const WorkerExit& exit, int node_rank, const std::string& host);

std::string to_json(const JobFailure& failure);
// nullopt when the text is not a failure record.
std::optional<JobFailure> job_failure_from_json(const std::string& text);

}  // namespace aml
