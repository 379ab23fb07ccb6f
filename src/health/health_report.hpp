// What a node's health checks found (DESIGN §5, "Bad nodes never hold a rank"): one result a
// check, each with its figure and the time it took, and the node's verdict. A failing node is
// never seated; its first failing check is what every node names.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace aml {

struct HealthResult {
  std::string check;  // "gpu", "nic", "path /scratch", "command"
  bool ok = true;
  std::string figure;       // what it found: "8 GPUs answer", "GPU 3: recovery action: reset"
  double seconds = 0;       // how long it took
  double slowest_gbps = 0;  // nic: its slowest port's rate (the nodes compare theirs)
};

struct HealthReport {
  std::vector<HealthResult> results;  // in the order they ran; none: nothing to check here
  double seconds = 0;                 // all of them, as this node waited for them
  const HealthResult* first_failure() const;
  double slowest_gbps() const;  // the nic check's, 0 where it did not run
  // "gpu: GPU 3: recovery action: reset" for the first failing check, "" when healthy.
  std::string failure() const;
};

// Each result a line ("  gpu      ok   8 GPUs answer (12 ms)"), for --dry-run and the summary.
std::string health_text(const HealthReport& report);
// {"healthy": bool, "seconds": s, "checks": [{"check", "ok", "figure", "seconds"}]}
std::string health_json(const HealthReport& report);

}  // namespace aml
