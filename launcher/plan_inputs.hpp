// The facts a launch plan is built from (PlanInputs), gathered before build_plan.
#pragma once

#include <aml/error.hpp>

#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "store/job_auth.hpp"
#include "topology/env.hpp"

namespace aml {

Result<PlanInputs> gather_inputs(const Options& options, const Topology& topology, const Env& env,
                                 const Machine& machine, const JobAuth& auth);

}  // namespace aml
