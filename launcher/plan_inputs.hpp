// The facts a launch plan is built from (PlanInputs), gathered before build_plan.
#pragma once

#include <aml/error.hpp>

#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "rendezvous/rendezvous_client.hpp"
#include "store/job_auth.hpp"
#include "topology/env.hpp"

namespace aml {

// `backend`: the rendezvous backend asked for (rendezvous_backend_for).
Result<PlanInputs> gather_inputs(const Options& options, const Topology& topology, const Env& env,
                                 const Machine& machine, const JobAuth& auth,
                                 const RendezvousBackend& backend);

}  // namespace aml
