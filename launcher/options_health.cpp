// --health-checks, --health-path, --health-command, --health-timeout, --bench-after and
// --bad-nodes-file: what each node checks of itself, and how long blame lasts.
#include "options.hpp"
#include "topology/numbers.hpp"

namespace aml {

using enum FlagId;

std::optional<Error> read_health_flags(const CommandLine& line, Options& options) {
  HealthSettings& health = options.health;
  if (line.has(health_checks)) {
    if (auto wrong = read_health_checks(line.value(health_checks), health)) {
      return invalid(flag_name(line, health_checks), line.value(health_checks), *wrong);
    }
  }
  for (const std::string& path : line.every[static_cast<int>(health_path)]) {
    if (path.empty()) return invalid(flag_name(line, health_path), path, "a directory");
    health.health_paths.push_back(path);
  }
  health.health_command = line.value(health_command);
  if (health.paths && health.health_paths.empty()) {
    return invalid(flag_name(line, health_checks), line.value(health_checks),
                   "paths with at least one --health-path DIR");
  }
  if (health.command && health.health_command.empty()) {
    return invalid(flag_name(line, health_checks), line.value(health_checks),
                   "command with --health-command CMD");
  }
  if (line.has(health_timeout)) {
    auto seconds = flag_decimal(flag_name(line, health_timeout), line.value(health_timeout), 0,
                                true, 3600, "seconds above 0, at most 3600");
    if (!seconds) return seconds.error();
    health.bound = std::chrono::milliseconds(static_cast<long long>(*seconds * 1000));
  }
  if (line.has(bench_after)) {
    auto rounds = parse_number(flag_name(line, bench_after), line.value(bench_after), 1, 1000000);
    if (!rounds) return rounds.error();
    options.bench_after = *rounds;
  }
  options.bad_nodes_file = line.value(bad_nodes_file);
  return std::nullopt;
}

namespace {

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

}  // namespace

void health_from_environment(HealthSettings& health, const Env& env) {
  if (const std::string* root = find(env, "AML_LAUNCH_HEALTH_ROOT")) {
    health.machine_root = *root;
  } else if (const std::string* machine = find(env, "AML_LAUNCH_MACHINE_ROOT")) {
    health.machine_root = *machine;
  }
  // The GPUs the workers will see are the ones this node should have: "" is none.
  if (const std::string* visible = find(env, "CUDA_VISIBLE_DEVICES")) {
    health.visible_gpus = comma_list(*visible);
  }
  if (const std::string* hcas = find(env, "NCCL_IB_HCA")) health.nic_filter = comma_list(*hcas);
}

std::string machine_name(const Env& env) {
  for (const char* name :
       {"AML_LAUNCH_NODE_NAME", "SLURMD_NODENAME", "NODE_NAME", "AZ_BATCH_NODE_ID"}) {
    if (const std::string* value = find(env, name); value && !value->empty()) return *value;
  }
  return "";
}

}  // namespace aml
