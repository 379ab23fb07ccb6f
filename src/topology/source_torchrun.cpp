// Source 1: a worker that torchrun (torch.distributed.run) started.
#include "topology/master.hpp"
#include "topology/numbers.hpp"
#include "topology/process_level.hpp"
#include "topology/sources.hpp"
#include "topology/worker_marker.hpp"

namespace aml {
namespace {

// aml-launch gives its own workers TORCHELASTIC_RUN_ID too (Lightning and others take the run
// for a torchelastic one by it): its value there is aml-launch's run id, and the worker is
// aml-launch's. A torchrun started inside an aml-launch worker sets a run id of its own.
bool present(const Env& env) {
  const std::string* run_id = find(env, "TORCHELASTIC_RUN_ID");
  if (run_id == nullptr) return false;
  const std::string* own_run_id = find(env, kRunIdVariable);
  return !(has(env, kWorkerMarker) && own_run_id != nullptr && *own_run_id == *run_id);
}

Result<Detected> read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  auto fields = read_process_fields(env, {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"});
  if (!fields) return fields.error();
  auto group_rank = optional_field(env, "GROUP_RANK", 0);
  if (!group_rank) return group_rank.error();
  auto group_world = optional_field(env, "GROUP_WORLD_SIZE", 1);
  if (!group_world) return group_world.error();
  fields->node_rank = *group_rank;
  fields->nnodes = *group_world;
  auto topology = process_level_topology(*fields, "torchrun");
  if (!topology) return topology.error();
  Topology& t = *topology;
  if (auto error = read_master_env(env, t)) return *error;
  t.reason = "TORCHELASTIC_RUN_ID is set: torchrun started this process";
  t.run_id = *find(env, "TORCHELASTIC_RUN_ID");
  if (const std::string* role = find(env, "ROLE_NAME")) t.role = *role;
  auto restarts = optional_number(env, "TORCHELASTIC_RESTART_COUNT", 0, kMaxCount);
  if (!restarts) return restarts.error();
  t.restart_count = restarts->value_or(0);
  return Detected{std::move(t)};
}

}  // namespace

const Source kTorchrunSource{"torchrun", present, read};

}  // namespace aml
