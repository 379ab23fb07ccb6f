// {rank}, {local_rank} and {node_rank} in the paths of --summary-file, --log-dir,
// --events-file and --job-events-file: this launcher's place.
#pragma once

#include <aml/topology.hpp>
#include <optional>

#include "options.hpp"

namespace aml {

// {rank}, {local_rank} and {node_rank} in --summary-file, --log-dir and --events-file: this
// launcher's place, so that the launchers of one srun or mpirun line (one path for all) each
// get their own. A
// per-process launcher has its worker's; a per-node one is its node's only launcher: rank =
// node rank, local rank 0.
std::optional<Error> expand_launcher_fields(Options& options, const Topology& t);

}  // namespace aml
