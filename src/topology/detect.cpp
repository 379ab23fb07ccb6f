#include "topology/detect.hpp"

#include <array>

#include "topology/sources.hpp"

namespace aml {

std::span<const Source> all_sources() {
  static const std::array<Source, 13> table = {
      kTorchrunSource,        kAmlLaunchSource,    kTfConfigSource,  kOpenMpiSource,
      kMvapichSource,         kMpichSource,        kSlurmSource,     kKubeflowSource,
      kTorchEnvProcessSource, kTorchEnvNodeSource, kSageMakerSource, kLsfSource,
      kStandaloneSource,
  };
  return table;
}

namespace {

// A run id for sources that carry none of their own.
std::string scheduler_run_id(const Env& env) {
  for (std::string_view variable :
       {"AZUREML_RUN_ID", "SLURM_JOB_ID", "LSB_JOBID", "TRAINING_JOB_NAME"}) {
    if (const std::string* id = find(env, variable)) return *id;
  }
  return {};
}

}  // namespace

Result<Topology> detect_topology(const Env& env, const Machine& machine,
                                 const Overrides& overrides) {
  const DetectContext context{env, machine, overrides};
  if (overrides.standalone) {
    // torchrun's --standalone: this host alone, whatever a scheduler set, under an id of its
    // own (the launcher makes one).
    auto detected = kStandaloneSource.read(context);
    if (!detected) return detected.error();
    detected->topology.reason = "--standalone: one node, this host, whatever a scheduler set";
    return apply_launch_rule(std::move(*detected), overrides);
  }
  for (const Source& source : all_sources()) {
    if (!source.present(env)) continue;
    auto detected = source.read(context);
    if (!detected) return detected.error();
    if (detected->topology.run_id.empty()) detected->topology.run_id = scheduler_run_id(env);
    return apply_launch_rule(std::move(*detected), overrides);
  }
  return missing("environment", "a topology source");  // unreachable: standalone always matches
}

}  // namespace aml
