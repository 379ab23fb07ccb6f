// Environment + CLI flags -> Topology: the first present source (DESIGN §2 order), then the
// launch rule and the explicit flags.
#pragma once

#include <aml/error.hpp>
#include <aml/topology.hpp>

#include "topology/env.hpp"
#include "topology/source.hpp"

namespace aml {

Result<Topology> detect_topology(const Env& env, const Machine& machine,
                                 const Overrides& overrides = {});

// The launch rule (DESIGN §2) and the flags over what one source read.
Result<Topology> apply_launch_rule(Detected detected, const Overrides& overrides);

}  // namespace aml
