// Source 2: a worker that aml-launch itself started; it reads back the canonical variables.
#include "topology/master.hpp"
#include "topology/numbers.hpp"
#include "topology/process_level.hpp"
#include "topology/sources.hpp"
#include "topology/worker_marker.hpp"

namespace aml {
namespace {

bool present(const Env& env) { return has(env, kWorkerMarker); }

Result<Detected> read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  Topology t;
  // A TensorFlow `ps` or `evaluator` task runs outside the training world and has no RANK.
  if (!has(env, "RANK") && has(env, "ROLE_NAME")) {
    t.source = "aml-launch";
    t.launch = Launch::per_process;
    t.role = *find(env, "ROLE_NAME");
  } else {
    auto fields =
        read_process_fields(env, {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"});
    if (!fields) return fields.error();
    auto node_rank = optional_field(env, "NODE_RANK", 0);
    if (!node_rank) return node_rank.error();
    auto nnodes = optional_field(env, "GROUP_WORLD_SIZE", 1);
    if (!nnodes) return nnodes.error();
    fields->node_rank = *node_rank;
    fields->nnodes = *nnodes;
    auto topology = process_level_topology(*fields, "aml-launch");
    if (!topology) return topology.error();
    t = std::move(*topology);
    if (const std::string* role = find(env, "ROLE_NAME")) t.role = *role;
  }
  if (auto error = read_master_env(env, t)) return *error;
  t.reason = std::string(kWorkerMarker) + " is set: aml-launch started this process";
  if (const std::string* run_id = find(env, kRunIdVariable)) t.run_id = *run_id;
  auto restarts = optional_number(env, kRestartCountVariable, 0, kMaxCount);
  if (!restarts) return restarts.error();
  t.restart_count = restarts->value_or(0);
  return Detected{std::move(t)};
}

}  // namespace

const Source kAmlLaunchSource{"aml-launch", present, read};

}  // namespace aml
