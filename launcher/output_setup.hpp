// How the workers' output is shown and kept (supervisor/output_stream.hpp): the console's prefix
// (--tag, torchrun's --log-line-prefix-template), the local ranks shown, the log files.
#pragma once

#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "supervisor/run_workers.hpp"
#include "topology/env.hpp"

namespace aml {

OutputOptions output_options(const Options& options, const LaunchPlan& plan, const Env& env);

}  // namespace aml
