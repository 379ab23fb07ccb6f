// --bind: where this launcher's workers run, worked out from the machine's /sys (or a test's
// copy named by AML_LAUNCH_MACHINE_ROOT) and what the scheduler set; and that placement as
// the spawn applies it.
#pragma once

#include <aml/error.hpp>
#include <optional>

#include "options.hpp"
#include "placement/placement.hpp"
#include "supervisor/spawn.hpp"
#include "topology/env.hpp"
#include "topology/source.hpp"

namespace aml {

// The placement of this launcher's local ranks; an error where an explicit mode cannot be
// done (auto falls back to none and says why).
Result<Placement> placement_for(const Options& options, const Topology& topology, const Env& env);

// A worker's CPUs and memory policy for the spawn.
WorkerBinding worker_binding(const std::optional<RankPlacement>& placement);

}  // namespace aml
