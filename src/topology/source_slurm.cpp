// Source 6: a task of a Slurm job step (srun). A batch script outside any step has
// SLURM_PROCID too, but it is not rank 0 of N; it falls through to later sources.
#include <numeric>

#include "topology/hostlist.hpp"
#include "topology/master.hpp"
#include "topology/numbers.hpp"
#include "topology/process_level.hpp"
#include "topology/sources.hpp"
#include "topology/tasks_per_node.hpp"

namespace aml {
namespace {

bool present(const Env& env) { return has(env, "SLURM_PROCID") && inside_slurm_step(env); }

struct NodeShape {
  int local_world_size;
  std::optional<Field> nnodes;
};

Result<NodeShape> node_shape(const Env& env, int node_id, const Field& world) {
  if (const std::string* text = find(env, "SLURM_STEP_TASKS_PER_NODE")) {
    auto counts = expand_tasks_per_node("SLURM_STEP_TASKS_PER_NODE", *text);
    if (!counts) return counts.error();
    if (node_id >= static_cast<int>(counts->size())) {
      return invalid("SLURM_NODEID", std::to_string(node_id),
                     "a node index below the " + std::to_string(counts->size()) +
                         " nodes of SLURM_STEP_TASKS_PER_NODE=" + *text);
    }
    long long total = std::accumulate(counts->begin(), counts->end(), 0LL);
    if (total != world.value) {
      return invalid("SLURM_STEP_TASKS_PER_NODE", *text,
                     "task counts adding up to " + std::string(world.variable) + "=" +
                         std::to_string(world.value));
    }
    return NodeShape{(*counts)[node_id],
                     Field{static_cast<int>(counts->size()), "SLURM_STEP_TASKS_PER_NODE"}};
  }
  auto per_node = optional_number(env, "SLURM_NTASKS_PER_NODE", 1, kMaxCount);
  if (!per_node) return per_node.error();
  if (!*per_node) {
    return missing("SLURM_STEP_TASKS_PER_NODE",
                   "the tasks per node of this step (or SLURM_NTASKS_PER_NODE)");
  }
  return NodeShape{**per_node, std::nullopt};
}

Result<std::optional<std::string>> first_node(const Env& env) {
  for (std::string_view variable :
       {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
    const std::string* text = find(env, variable);
    if (text == nullptr) continue;
    auto hosts = expand_hostlist(variable, *text);
    if (!hosts) return hosts.error();
    return std::optional<std::string>(hosts->front());
  }
  return std::optional<std::string>();
}

// The job step: two steps of one allocation (srun ... & twice: a sweep, a train beside an
// eval) are two jobs, each with its own run id and port.
int step_number(const Env& env) {
  const std::string* text = find(env, "SLURM_STEP_ID");
  if (text == nullptr) return 0;
  auto step = parse_number("SLURM_STEP_ID", *text, 0, 0x7fffffff);
  return step ? *step : 0;
}

Result<int> default_port(const Env& env) {
  // 15000 + the job id's last four digits for a job's first step: every node computes the
  // same port, and two jobs sharing a node rarely collide. Each later step moves 7919 on
  // (prime to 10000): the steps of a job, and the next jobs' first steps, stay apart.
  for (std::string_view variable : {"SLURM_JOB_ID", "SLURM_JOBID"}) {
    const std::string* text = find(env, variable);
    if (text == nullptr) continue;
    auto id = parse_number(variable, *text, 0, 0x7fffffff);
    if (!id) return id.error();
    const long long step = step_number(env);
    return 15000 + static_cast<int>((*id % 10000 + step * 7919) % 10000);
  }
  return kTorchDefaultPort;
}

Result<Detected> read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  ProcessFields f;
  auto rank = required_field(env, "SLURM_PROCID", 0);
  if (!rank) return rank.error();
  // SLURM_NPROCS is the older name of SLURM_NTASKS.
  const std::string_view world_variable =
      has(env, "SLURM_NTASKS") || !has(env, "SLURM_NPROCS") ? "SLURM_NTASKS" : "SLURM_NPROCS";
  auto world = required_field(env, world_variable, 1);
  if (!world) return world.error();
  auto local_rank = required_field(env, "SLURM_LOCALID", 0);
  if (!local_rank) return local_rank.error();
  auto node_id = required_field(env, "SLURM_NODEID", 0);
  if (!node_id) return node_id.error();
  auto shape = node_shape(env, node_id->value, *world);
  if (!shape) return shape.error();
  f.rank = *rank;
  f.world_size = *world;
  f.local_rank = *local_rank;
  f.local_world_size = Field{shape->local_world_size, "SLURM_STEP_TASKS_PER_NODE"};
  f.node_rank = *node_id;
  f.nnodes = shape->nnodes;
  auto topology = process_level_topology(f, "slurm");
  if (!topology) return topology.error();
  Topology& t = *topology;

  auto fallback_port = default_port(env);
  if (!fallback_port) return fallback_port.error();
  if (auto error = read_master_env(env, t, *fallback_port)) return *error;
  if (t.master_addr.empty()) {
    auto addr = first_node(env);
    if (!addr) return addr.error();
    t.master_addr = addr->value_or("");
  }
  t.reason = "SLURM_PROCID is set inside job step SLURM_STEP_ID=" + *find(env, "SLURM_STEP_ID");
  if (const std::string* job = find(env, "SLURM_JOB_ID")) {
    t.run_id = *job + "." + *find(env, "SLURM_STEP_ID");  // Slurm's own name for the step
  }
  return Detected{std::move(t), "MASTER_ADDR or SLURM_STEP_NODELIST"};
}

}  // namespace

// Slurm's own step ids for the batch script, the extern step and interactive steps are
// 0xfffffff0 and above, or words in some versions.
bool inside_slurm_step(const Env& env) {
  const std::string* step = find(env, "SLURM_STEP_ID");
  if (step == nullptr) return false;
  auto id = parse_number("SLURM_STEP_ID", *step, 0, 0x7fffffff);
  return id.ok();
}

const Source kSlurmSource{"slurm", present, read};

}  // namespace aml
