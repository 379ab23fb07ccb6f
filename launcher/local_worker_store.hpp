// One launcher alone on its host (one node, no node group): it serves its own workers' torch
// store at the job's MASTER_PORT (DESIGN §3), open to this host alone, new at each round.
#pragma once

#include <aml/error.hpp>
#include <aml/topology.hpp>
#include <memory>

#include "store/store_host.hpp"

namespace aml {

Result<std::unique_ptr<StoreHost>> serve_local_worker_store(const Topology& t);

}  // namespace aml
