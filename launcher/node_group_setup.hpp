// How this launcher meets the other launchers of its job (DESIGN §5): whether it does, the
// group it starts, and what each round's rendezvous gives the workers.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "rendezvous/node_group.hpp"

namespace aml {

bool joins_group(const Options& options, const Topology& t);

std::string host_name();

// `say`: what a launcher waiting for an elastic round says on stderr.
Result<std::unique_ptr<NodeGroup>> start_node_group(const Options& options, const LaunchPlan& plan,
                                                    const PlanInputs& inputs,
                                                    std::function<void(const std::string&)> say);

void apply_agreement(const Agreement& agreed, const NodeGroup& group, PlanInputs& inputs);

}  // namespace aml
