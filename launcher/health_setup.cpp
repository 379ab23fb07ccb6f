#include "health_setup.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace aml {

std::string plan_with_health(const Options& options, const LaunchPlan& plan) {
  HealthLooks looks;
  const HealthReport health =
      options.health.none() ? HealthReport{} : run_health_checks(options.health, looks);
  if (options.format == OutputFormat::json) {
    auto out = nlohmann::ordered_json::parse(plan_json(plan));
    out["health"] = nlohmann::ordered_json::parse(health_json(health));
    return out.dump(2) + "\n";
  }
  char took[32];
  std::snprintf(took, sizeof took, "%.1f ms", health.seconds * 1000);
  return plan_text(plan) + "Health checks (--health-checks" +
         (options.health.none() ? " none" : "") + ", " + took + " in all):\n" + health_text(health);
}

std::optional<std::string> alone_health_failure(HealthWatch& health) {
  const HealthReport report = health.verdict();
  const HealthResult* failed = report.first_failure();
  if (!failed) return std::nullopt;
  return "this node failed its health check: " + failed->check + ": " + failed->figure +
         " (no worker was started; --health-checks)";
}

}  // namespace aml
