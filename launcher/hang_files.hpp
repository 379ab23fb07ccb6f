// --hang-timeout's and --straggler-check's files (DESIGN §6): what the workers' Python and PyTorch
// are told (faulthandler, the NCCL Flight Recorder's trace buffer, pipes and dumps) and where those
// files go.
#pragma once

#include <aml/topology.hpp>
#include <string>

#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "supervisor/run_workers.hpp"
#include "topology/env.hpp"

namespace aml {

// --hang-timeout or --straggler-check: both read PyTorch's flight recorder.
bool flight_recorder_wanted(const Options& options);

// The variables for every worker; what the environment already sets is left alone.
EnvList hang_environment(const Options& options, const Topology& t, const Env& env,
                         const std::string& run_id);

// Fills in where the hang's files go (the stacks, the Flight Recorder's pipes and dumps: ours,
// or the user's own) and makes the pipes' directory, which PyTorch does not. Returns that
// directory where this call made it, else "".
std::string prepare_hang_files(const Options& options, const Env& env, const EnvList& hang_env,
                               const std::string& run_id, RunOptions& run_options);

// After the run: a directory that prepare_hang_files made and nothing was written to (no
// hang) is not left behind.
void remove_if_empty(const std::string& made);

}  // namespace aml
