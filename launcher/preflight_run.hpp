// --preflight (DESIGN §4): before the command, every rank runs aml-preflight, which joins a
// communicator and checks an allreduce; a failure stops the job before the command starts.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "supervisor/failure_summary.hpp"
#include "supervisor/peer_link.hpp"
#include "supervisor/run_workers.hpp"
#include "topology/env.hpp"

namespace aml {

// A round of workers of a phase ("run", or "preflight" before it) running `command`.
using RoundMaker = std::function<Result<RoundLaunch>(
    const std::string& phase, const std::vector<std::string>& command, int restart_count)>;

// 0 where every rank passed; else the status the job ends with, said through `say(text,
// stop_requested)`. `on_first_use`: as RunOptions has it.
int run_preflight(const Options& options, const LaunchPlan& plan, const Env& env,
                  const NodeIdentity& node, PeerLink* peers, const RoundMaker& round_of,
                  const std::function<std::vector<RunOptions::OnFirstUse>()>& on_first_use,
                  const std::function<void(const std::string&, bool)>& say);

}  // namespace aml
