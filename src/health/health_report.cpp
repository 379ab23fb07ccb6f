#include "health/health_report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace aml {

const HealthResult* HealthReport::first_failure() const {
  for (const HealthResult& result : results) {
    if (!result.ok) return &result;
  }
  return nullptr;
}

double HealthReport::slowest_gbps() const {
  for (const HealthResult& result : results) {
    if (result.slowest_gbps > 0) return result.slowest_gbps;
  }
  return 0;
}

std::string HealthReport::failure() const {
  const HealthResult* failed = first_failure();
  return failed ? failed->check + ": " + failed->figure : "";
}

std::string health_text(const HealthReport& report) {
  if (report.results.empty()) return "  nothing to check on this node\n";
  std::string text;
  for (const HealthResult& result : report.results) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f ms", result.seconds * 1000);
    text += "  " + result.check + ": " + (result.ok ? "ok" : "FAILED") + ": " + result.figure +
            " (" + took + ")\n";
  }
  return text;
}

std::string health_json(const HealthReport& report) {
  nlohmann::ordered_json j;
  j["healthy"] = report.first_failure() == nullptr;
  j["seconds"] = report.seconds;
  auto& checks = j["checks"] = nlohmann::ordered_json::array();
  for (const HealthResult& result : report.results) {
    checks.push_back({{"check", result.check},
                      {"ok", result.ok},
                      {"figure", result.figure},
                      {"seconds", result.seconds}});
  }
  return j.dump();
}

}  // namespace aml
