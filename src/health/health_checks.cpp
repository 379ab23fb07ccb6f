#include "health/health_checks.hpp"

#include <sstream>
#include <thread>

#include "util/seconds_text.hpp"
#include "util/signal_free_thread.hpp"

namespace aml {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <typename Check>
HealthResult timed(Check check) {
  const auto start = Clock::now();
  HealthResult result = check();
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace

std::optional<std::string> read_health_checks(const std::string& words, HealthSettings& settings) {
  settings.automatic = false;
  settings.gpu = settings.nic = settings.paths = settings.command = false;
  if (words == "auto") {
    settings.automatic = true;
    return std::nullopt;
  }
  if (words == "none") return std::nullopt;
  std::stringstream list(words);
  std::string word;
  while (std::getline(list, word, ',')) {
    if (word == "gpu")
      settings.gpu = true;
    else if (word == "nic")
      settings.nic = true;
    else if (word == "paths")
      settings.paths = true;
    else if (word == "command")
      settings.command = true;
    else
      return "auto, none, or a list of gpu, nic, paths and command (not \"" + word + "\")";
  }
  return std::nullopt;
}

std::optional<std::uint64_t> HealthLooks::last(const std::string& name) const {
  for (const auto& [key, figure] : counters) {
    if (key == name) return figure;
  }
  return std::nullopt;
}

void HealthLooks::remember(const std::string& name, std::uint64_t figure) {
  for (auto& [key, kept] : counters) {
    if (key == name) {
      kept = figure;
      return;
    }
  }
  counters.emplace_back(name, figure);
}

HealthReport run_health_checks(const HealthSettings& settings, HealthLooks& looks) {
  const auto start = Clock::now();
  HealthReport report;
  const bool command = !settings.health_command.empty() && (settings.automatic || settings.command);
  // The user's command runs beside the others: it is the one most likely to take a while.
  std::optional<std::thread> beside;
  HealthResult command_result;
  if (command)
    beside.emplace(signal_free_thread(
        [&] { command_result = timed([&] { return check_command(settings); }); }));
  if (settings.gpu || (settings.automatic && has_gpus(settings))) {
    HealthResult gpu = timed([&] { return check_gpus(settings, looks); });
    // Device files without the driver's library (a CPU job's container on a GPU node): auto
    // says so and goes on; only --health-checks gpu makes it a failure.
    if (!settings.gpu && gpu.figure.starts_with(kNoDriver)) {
      gpu.ok = true;
      gpu.figure = "skipped (auto): " + gpu.figure;
    }
    report.results.push_back(gpu);
  }
  if (settings.nic || (settings.automatic && has_nics(settings))) {
    report.results.push_back(timed([&] { return check_nics(settings, looks); }));
  }
  if (settings.automatic || settings.paths) {
    for (const std::string& path : settings.health_paths) {
      report.results.push_back(timed([&] { return check_path(settings, path); }));
    }
  }
  if (beside) {
    beside->join();
    report.results.push_back(command_result);
  }
  report.seconds = seconds_since(start);
  return report;
}

HealthWatch::HealthWatch(HealthSettings settings)
    : settings_(std::move(settings)), looks_(std::make_shared<HealthLooks>()) {}

HealthWatch::~HealthWatch() = default;

void HealthWatch::begin() {
  if (!active() || pending_) return;
  if (hung_) looks_ = std::make_shared<HealthLooks>();  // the hung look keeps the old one
  hung_ = false;
  std::packaged_task<HealthReport()> task(
      [settings = settings_, looks = looks_] { return run_health_checks(settings, *looks); });
  pending_ = task.get_future();
  begun_ = Clock::now();
  // Detached: a look that hangs (an NVML call on a GPU gone from the bus) must not hold the
  // launcher; it is named failed at the bound and left to end on its own.
  // It takes no signal: one it took would be lost to the main thread's signalfd (a worker's
  // SIGCHLD among them), and a hung look lasts.
  signal_free_thread(std::move(task)).detach();
}

HealthReport HealthWatch::verdict() {
  if (!active()) return {};
  begin();
  // The command has its own bound; NVML's calls and /sys's reads have this one.
  const auto bound = begun_ + settings_.bound + std::chrono::milliseconds(500);
  if (pending_->wait_until(bound) != std::future_status::ready) {
    hung_ = true;
    pending_.reset();
    HealthReport report;
    report.results.push_back({"checks", false,
                              "no answer within --health-timeout " + seconds_text(settings_.bound) +
                                  " (a GPU or a filesystem that does not answer)",
                              seconds_since(begun_)});
    report.seconds = seconds_since(begun_);
    return last_ = report;
  }
  last_ = pending_->get();
  pending_.reset();
  return last_;
}

}  // namespace aml
