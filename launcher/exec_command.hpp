// A worker's environment as the launcher gives it, and --exec: the command in the launcher's
// place, as that one rank.
#pragma once

#include <string>
#include <vector>

#include "plan/launch_plan.hpp"
#include "topology/env.hpp"

namespace aml {

// The launcher's environment with the worker's variables over it, as "NAME=value" entries.
std::vector<std::string> environ_with(const Env& base, const EnvList& added);

// --exec: replaces this process (a per-process launch's one rank); returns only on an error,
// said on stderr, with the launcher's exit status.
int exec_command(const LaunchPlan& plan, const Env& env);

}  // namespace aml
