#include "health_setup.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "node_group_setup.hpp"

namespace aml {

bool health_checked(const Options& options, const Topology& topology) {
  return joins_group(options, topology) ? !options.health.none() : options.health.asked_alone();
}

std::string plan_with_health(const Options& options, const LaunchPlan& plan) {
  HealthLooks looks;
  // What the launch would check: a node alone, only what was asked for by name.
  const bool checked = health_checked(options, plan.topology);
  const HealthReport health = checked ? run_health_checks(options.health, looks) : HealthReport{};
  if (options.format == OutputFormat::json) {
    auto out = nlohmann::ordered_json::parse(plan_json(plan));
    out["health"] = nlohmann::ordered_json::parse(health_json(health));
    return out.dump(2) + "\n";
  }
  if (!checked) {
    return plan_text(plan) + "Health checks: none (" +
           (options.health.none() ? std::string("--health-checks none")
                                  : "a node alone checks only what is asked for by name") +
           ")\n";
  }
  char took[32];
  std::snprintf(took, sizeof took, "%.1f ms", health.seconds * 1000);
  return plan_text(plan) + "Health checks (" + took + " in all):\n" + health_text(health);
}

std::optional<std::string> alone_health_failure(HealthWatch& health) {
  const HealthReport report = health.verdict();
  const HealthResult* failed = report.first_failure();
  if (!failed) return std::nullopt;
  return "this node failed its health check: " + failed->check + ": " + failed->figure +
         " (no worker was started; --health-checks)";
}

}  // namespace aml
