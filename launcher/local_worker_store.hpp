// One launcher alone on its host (one node, no node group) serves its own workers' stores, new
// at each round (DESIGN §3): torch's at the job's MASTER_PORT, open to this host alone, and the
// rank library's (aml::comm, aml-preflight) on loopback, where on several nodes node 0's is.
#pragma once

#include <aml/error.hpp>
#include <aml/topology.hpp>
#include <memory>

#include "plan/launch_plan.hpp"
#include "store/core/store_host.hpp"
#include "supervisor/run_workers.hpp"

namespace aml {

struct LocalWorkerStores {
  std::unique_ptr<StoreHost> torch;
  std::unique_ptr<StoreHost> rank_library;
  // Each one's thread begins at its first connection (RunOptions::on_first_use): a launch
  // whose workers never use a store pays its listening socket alone, and the spawns neither
  // wait for a thread nor share the CPU with it. The first worker to connect waits in the
  // backlog for the moment the thread takes to start.
  std::vector<RunOptions::OnFirstUse> on_first_use() const {
    std::vector<RunOptions::OnFirstUse> uses;
    for (StoreHost* host : {torch.get(), rank_library.get()}) {
      if (host) uses.push_back({host->first_use_fd(), [host] { host->serve(); }});
    }
    return uses;
  }
};

// Listening, not yet served (LocalWorkerStores::on_first_use). `inputs`: the rank library's
// port and token (gather_inputs).
Result<LocalWorkerStores> serve_local_worker_stores(const Topology& t, const PlanInputs& inputs);

}  // namespace aml
