// --metrics-port (DESIGN §6b): where this launcher serves its metrics, the server started and
// its address said.
#pragma once

#include <memory>
#include <string>

#include "metrics/metrics_board.hpp"
#include "metrics/metrics_server.hpp"
#include "options.hpp"
#include "plan/launch_plan.hpp"

namespace aml {

// Where the metrics listen: --metrics-port's ADDR where given; else the address this node
// reaches node 0 from in a job of several nodes (a scrape from the job's network reaches it,
// nothing else needs to), 127.0.0.1 on one node. Per-process launchers: PORT + local rank.
struct MetricsPlace {
  std::string address;
  int port = 0;
};
Result<MetricsPlace> metrics_place(const std::string& flag_value, const Topology& topology);

// Started where --metrics-port asks for it (null where it does not), its URL said on stderr;
// answering at once in a job of several nodes (its rendezvous may be long), else from its
// first scrape (run_workers' on_first_use: a launch of one node keeps its speed).
Result<std::unique_ptr<MetricsServer>> start_metrics(const Options& options,
                                                     const Topology& topology, MetricsBoard& board);

}  // namespace aml
