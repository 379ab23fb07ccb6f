// The job-level fields of a topology as JSON: the top of `--dry-run --format json`, and what
// the rank library's aml_topology_json() (Python: aml_launch.topology()) starts from.
#pragma once

#include <nlohmann/json.hpp>

#include "aml/topology.hpp"

namespace aml {

// source, reason, launch, nnodes, node_rank, nproc_per_node, world_size, master_addr,
// master_port, in this order.
nlohmann::ordered_json topology_json(const Topology& topology);

}  // namespace aml
