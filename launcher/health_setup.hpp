// The health checks as the launcher uses them (DESIGN §5; src/health/): what --dry-run prints of
// them, and a node alone's checks.
#pragma once

#include <optional>
#include <string>

#include "health/health_checks.hpp"
#include "options.hpp"
#include "plan/launch_plan.hpp"

namespace aml {

// Whether the launch checks this node: at every round where it meets other nodes (what
// --health-checks says), alone only what was asked for by name.
bool health_checked(const Options& options, const Topology& topology);

// --dry-run: the plan, and the checks run as a round would run them, each with its time.
std::string plan_with_health(const Options& options, const LaunchPlan& plan);

// A node alone checks only what was asked for by name: the error that stops it, or nullopt.
std::optional<std::string> alone_health_failure(HealthWatch& health);

}  // namespace aml
