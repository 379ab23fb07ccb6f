// The facts a launch plan is built from (PlanInputs), gathered before build_plan.
#pragma once

#include <aml/error.hpp>

#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "rendezvous/rendezvous_backend.hpp"
#include "store/launchers/job_auth.hpp"
#include "topology/env.hpp"

namespace aml {

// --nproc-per-node auto, gpu or cpu: counted here (the visible GPUs, the CPUs this launcher may
// use) into the overrides, so that a scheduler's one process per node starts that many.
std::optional<Error> count_nproc_word(Options& options, const Env& env, const Machine& machine);

// Who serves the workers' torch store at MASTER_ADDR:MASTER_PORT, and why (DESIGN §3).
WorkerStorePlan worker_store_for(const Options& options, const Topology& t);

// `backend`: the rendezvous backend asked for (rendezvous_backend_for).
Result<PlanInputs> gather_inputs(const Options& options, const Topology& topology, const Env& env,
                                 const Machine& machine, const JobAuth& auth,
                                 const RendezvousBackend& backend);

}  // namespace aml
