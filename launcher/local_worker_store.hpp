// One launcher alone on its host (one node, no node group) serves its own workers' stores, new
// at each round (DESIGN §3): torch's at the job's MASTER_PORT, open to this host alone, and the
// rank library's (aml::comm, aml-preflight) on loopback, where on several nodes node 0's is.
#pragma once

#include <aml/error.hpp>
#include <aml/topology.hpp>
#include <memory>

#include "plan/launch_plan.hpp"
#include "store/core/store_host.hpp"

namespace aml {

struct LocalWorkerStores {
  std::unique_ptr<StoreHost> torch;
  std::unique_ptr<StoreHost> rank_library;
};

// `inputs`: the rank library's port and token (gather_inputs).
Result<LocalWorkerStores> serve_local_worker_stores(const Topology& t, const PlanInputs& inputs);

}  // namespace aml
