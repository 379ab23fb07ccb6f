// A node's own health, looked at while the rendezvous forms (DESIGN §5): its GPUs through NVML
// opened at run time, its InfiniBand/RoCE ports from /sys, the paths the user names, and the
// user's own command. Each check is bounded in time; `auto` runs what this node has, so that a
// node without GPUs or HCAs pays nothing. Counters that must not grow (a port's link-downed and
// symbol errors, a GPU's Xid events) are compared with the last look, kept for the job.
#pragma once

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "health/health_report.hpp"

namespace aml {

struct HealthSettings {
  bool gpu = false, nic = false, paths = false, command = false;  // what was asked
  bool automatic = true;  // --health-checks auto: gpu and nic where this node has them
  std::vector<std::string> health_paths;      // --health-path
  std::uint64_t min_free_bytes = 1ull << 30;  // each path's free space at least this
  std::string health_command;                 // --health-command, run by /bin/sh -c
  std::chrono::milliseconds bound{10000};     // --health-timeout: each check at most this
  std::string machine_root = "/";             // AML_LAUNCH_MACHINE_ROOT (tests' /sys and /dev)
  std::optional<std::vector<std::string>> visible_gpus;  // CUDA_VISIBLE_DEVICES, when set
  std::vector<std::string> nic_filter;  // NCCL_IB_HCA's names ("mlx5_0", "mlx5_1:1"); none: all
  bool none() const { return !automatic && !gpu && !nic && !paths && !command; }
  // Asked for by name (a list, a path, a command): what a node alone checks too.
  bool asked_alone() const {
    return (!automatic && !none()) ||
           (automatic && (!health_paths.empty() || !health_command.empty()));
  }
};

// "auto", "none" or a list of gpu, nic, paths, command; an error names a word it does not know.
std::optional<std::string> read_health_checks(const std::string& words, HealthSettings& settings);

// What one look remembers for the next (a counter's last figure) and holds open between looks
// (NVML and its Xid events): one per launcher, for the job.
class HealthLooks {
 public:
  HealthLooks();
  ~HealthLooks();
  HealthLooks(const HealthLooks&) = delete;
  HealthLooks& operator=(const HealthLooks&) = delete;
  struct Nvml;  // health/gpu_check.cpp
  std::unique_ptr<Nvml> nvml;
  // "mlx5_0/1 link_downed" -> its figure at the last look
  std::vector<std::pair<std::string, std::uint64_t>> counters;
  std::optional<std::uint64_t> last(const std::string& name) const;
  void remember(const std::string& name, std::uint64_t figure);
};

HealthResult check_gpus(const HealthSettings& settings, HealthLooks& looks);
inline constexpr std::string_view kNoDriver = "no NVIDIA driver here";  // how its figure begins
HealthResult check_nics(const HealthSettings& settings, HealthLooks& looks);
HealthResult check_path(const HealthSettings& settings, const std::string& path);
HealthResult check_command(const HealthSettings& settings);
// Whether this node has what `auto` looks at: an NVIDIA device file, an HCA's port.
bool has_gpus(const HealthSettings& settings);
bool has_nics(const HealthSettings& settings);

// Every check asked, in turn (the command beside them), within the bound.
HealthReport run_health_checks(const HealthSettings& settings, HealthLooks& looks);

// The checks of one round, begun as the round's rendezvous begins and waited for only where
// their verdict is needed; each round begins them again. A look that does not end within the
// bound is a failed check (an NVML call that hangs is itself a bad GPU).
class HealthWatch {
 public:
  explicit HealthWatch(HealthSettings settings);
  ~HealthWatch();
  bool active() const { return !settings_.none(); }
  void begin();            // a look, unless one is under way
  HealthReport verdict();  // the look begun last (begun now if none), waited for
  const HealthReport& last() const { return last_; }
  std::chrono::steady_clock::time_point looked_at() const { return begun_; }  // the last look's

 private:
  HealthSettings settings_;
  std::shared_ptr<HealthLooks> looks_;
  std::optional<std::future<HealthReport>> pending_;
  std::chrono::steady_clock::time_point begun_;
  HealthReport last_;
  bool hung_ = false;  // a look never ended: later ones cannot share its state
};

}  // namespace aml
