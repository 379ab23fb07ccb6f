// The NIC check: every InfiniBand/RoCE port the job uses (NCCL_IB_HCA's, else every HCA's),
// from /sys/class/infiniband: state ACTIVE and physical state LinkUp, and its link-downed and
// symbol-error counters not grown since the last look (a port that flaps comes back up between
// two looks, its counter says it went down).
#include <cstdlib>

#include "health/health_checks.hpp"
#include "placement/sys_reader.hpp"

namespace aml {
namespace {

constexpr const char* kHcas = "/sys/class/infiniband";

// NCCL_IB_HCA's forms: "mlx5_0,mlx5_1:1" (prefixes, a port), "=mlx5_0" (exact), "^mlx5_2"
// (all but these).
bool used(const std::vector<std::string>& filter, const std::string& hca, const std::string& port) {
  if (filter.empty()) return true;
  bool exclude = false, exact = false;
  bool matched = false;
  for (std::string word : filter) {
    if (word.starts_with("^")) exclude = true, word = word.substr(1);
    if (word.starts_with("=")) exact = true, word = word.substr(1);
    std::string name = word, want_port;
    if (auto colon = word.find(':'); colon != std::string::npos) {
      name = word.substr(0, colon);
      want_port = word.substr(colon + 1);
    }
    const bool name_ok = exact ? hca == name : hca.starts_with(name);
    if (name_ok && (want_port.empty() || want_port == port)) matched = true;
  }
  return exclude ? !matched : matched;
}

// "4: ACTIVE" -> "ACTIVE"
std::string after_colon(const std::string& text) {
  const auto colon = text.find(": ");
  return colon == std::string::npos ? text : text.substr(colon + 2);
}

}  // namespace

bool has_nics(const HealthSettings& settings) {
  return !SysReader(settings.machine_root).entries(kHcas).empty();
}

HealthResult check_nics(const HealthSettings& settings, HealthLooks& looks) {
  HealthResult result{"nic", true, "", 0};
  const SysReader sys(settings.machine_root);
  std::vector<std::string> faults;
  int ports = 0;
  double slowest = 0;
  std::string slowest_port;
  for (const std::string& hca : sys.entries(kHcas)) {
    const std::string base = std::string(kHcas) + "/" + hca + "/ports";
    for (const std::string& port : sys.entries(base)) {
      if (!used(settings.nic_filter, hca, port)) continue;
      ++ports;
      const std::string at = base + "/" + port;
      const std::string name = hca + "/" + port;
      const std::string state = after_colon(sys.text(at + "/state").value_or("unreadable"));
      const std::string phys = after_colon(sys.text(at + "/phys_state").value_or("unreadable"));
      if (state != "ACTIVE") faults.push_back(name + " is " + state + " (not ACTIVE)");
      if (phys != "LinkUp") faults.push_back(name + "'s link is " + phys + " (not LinkUp)");
      // "200 Gb/sec (4X HDR)"
      const double rate = std::atof(sys.text(at + "/rate").value_or("0").c_str());
      if (slowest_port.empty() || rate < slowest) slowest = rate, slowest_port = name;
      for (const char* counter : {"link_downed", "symbol_error"}) {
        auto text = sys.text(at + "/counters/" + counter);
        if (!text) continue;
        const std::uint64_t figure = std::strtoull(text->c_str(), nullptr, 10);
        const std::string key = name + " " + counter;
        if (auto before = looks.last(key); before && figure > *before) {
          faults.push_back(name + "'s " + counter + " grew from " + std::to_string(*before) +
                           " to " + std::to_string(figure) + " since the last look");
        }
        looks.remember(key, figure);
      }
    }
  }
  if (ports == 0) {
    result.ok = false;
    result.figure = "no InfiniBand/RoCE port" +
                    std::string(settings.nic_filter.empty() ? "" : " that NCCL_IB_HCA names") +
                    " under " + sys.at(kHcas);
    return result;
  }
  if (!faults.empty()) {
    result.ok = false;
    for (std::size_t i = 0; i < faults.size(); ++i) result.figure += (i ? "; " : "") + faults[i];
    return result;
  }
  result.slowest_gbps = slowest;
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g", slowest);
  result.figure = std::to_string(ports) + " port" + (ports == 1 ? "" : "s") +
                  " ACTIVE and LinkUp, counters steady, slowest " + slowest_port + " at " + rate +
                  " Gb/s";
  return result;
}

}  // namespace aml
