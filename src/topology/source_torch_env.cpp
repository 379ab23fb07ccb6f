// Sources 8 and 9: the torch.distributed env:// variables, as Azure ML's PyTorch distribution
// and any env:// launcher set them. With RANK it is one process of a per-process launch; with
// only NODE_RANK and MASTER_ADDR it is one launcher per node.
#include "topology/master.hpp"
#include "topology/nproc.hpp"
#include "topology/numbers.hpp"
#include "topology/process_level.hpp"
#include "topology/sources.hpp"

namespace aml {
namespace {

std::string text_of(const Field& f) {
  return std::string(f.variable) + "=" + std::to_string(f.value);
}

// LOCAL_WORLD_SIZE when it is missing. On node k > 0 every node before holds the same count,
// so it is (RANK - LOCAL_RANK) / NODE_RANK. On node 0 nothing in the environment tells, so:
// an explicit --nproc-per-node asks for Azure ML's per-node launch (one process here), a
// --nnodes divides the world, a GPU count that fits is taken, else one node holds them all.
Result<Field> derive_local_world(const DetectContext& ctx, const Field& rank, const Field& world,
                                 const std::optional<Field>& local_rank,
                                 const std::optional<Field>& node_rank,
                                 std::vector<std::string>& notes) {
  if (node_rank && node_rank->value > 0) {
    if (!local_rank)
      return missing("LOCAL_RANK", "the rank within the node, with " + text_of(*node_rank));
    int before = rank.value - local_rank->value;
    if (before <= 0 || before % node_rank->value != 0 ||
        before / node_rank->value <= local_rank->value) {
      return invalid("RANK", std::to_string(rank.value),
                     "NODE_RANK * LOCAL_WORLD_SIZE + LOCAL_RANK for some local world size (" +
                         text_of(*node_rank) + ", " + text_of(*local_rank) +
                         "); set LOCAL_WORLD_SIZE");
    }
    return Field{before / node_rank->value, "LOCAL_WORLD_SIZE"};
  }
  if (node_rank || local_rank) {
    int own_local = local_rank ? local_rank->value : rank.value;
    if (own_local != rank.value) {
      return missing("LOCAL_WORLD_SIZE", "the processes per node (" + text_of(rank) + " and " +
                                             text_of(*local_rank) + " span several nodes)");
    }
  }
  if (ctx.overrides.nproc_per_node && rank.value == 0 && node_rank) {
    return Field{1, "LOCAL_WORLD_SIZE"};
  }
  if (ctx.overrides.nnodes && world.value % *ctx.overrides.nnodes == 0) {
    return Field{world.value / *ctx.overrides.nnodes, "--nnodes"};
  }
  NprocGuess gpus = auto_nproc_per_node(ctx.env, ctx.machine);
  if (gpus.gpus > 0 && gpus.count > rank.value && world.value % gpus.count == 0) {
    notes.push_back("LOCAL_WORLD_SIZE is not set: taken as the " + std::to_string(gpus.count) +
                    " GPUs of this node (" + std::string(gpus.why) + ")");
    return Field{gpus.count, "LOCAL_WORLD_SIZE"};
  }
  if (node_rank) {
    notes.push_back("LOCAL_WORLD_SIZE is not set: all " + text_of(world) +
                    " ranks are taken to be on this node");
  }
  return Field{world.value, "LOCAL_WORLD_SIZE"};
}

bool process_present(const Env& env) { return has(env, "RANK") && has(env, "WORLD_SIZE"); }

Result<Detected> process_read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  auto rank = required_field(env, "RANK", 0);
  if (!rank) return rank.error();
  auto world = required_field(env, "WORLD_SIZE", 1);
  if (!world) return world.error();
  if (rank->value >= world->value) {
    return invalid("RANK", std::to_string(rank->value), "a rank below " + text_of(*world));
  }
  auto local_rank_read = optional_field(env, "LOCAL_RANK", 0);
  if (!local_rank_read) return local_rank_read.error();
  auto local_world_read = optional_field(env, "LOCAL_WORLD_SIZE", 1);
  if (!local_world_read) return local_world_read.error();
  auto node_rank_read = optional_field(env, "NODE_RANK", 0);
  if (!node_rank_read) return node_rank_read.error();
  const std::optional<Field>& local_rank = *local_rank_read;
  const std::optional<Field>& node_rank = *node_rank_read;

  std::vector<std::string> notes;
  ProcessFields f{*rank, *world, {}, {}, node_rank, std::nullopt};
  if (*local_world_read) {
    f.local_world_size = **local_world_read;
  } else {
    auto derived = derive_local_world(ctx, *rank, *world, local_rank, node_rank, notes);
    if (!derived) return derived.error();
    f.local_world_size = *derived;
  }
  const int local_world = f.local_world_size.value;
  if (local_rank) {
    f.local_rank = *local_rank;
  } else if (node_rank) {
    f.local_rank = Field{rank->value - node_rank->value * local_world, "LOCAL_RANK"};
    if (f.local_rank.value < 0) return missing("LOCAL_RANK", "the rank within the node");
  } else {
    f.local_rank = Field{rank->value % local_world, "LOCAL_RANK"};
  }
  if (node_rank && rank->value != node_rank->value * local_world + f.local_rank.value) {
    return invalid("RANK", std::to_string(rank->value),
                   "NODE_RANK * LOCAL_WORLD_SIZE + LOCAL_RANK = " +
                       std::to_string(node_rank->value * local_world + f.local_rank.value) +
                       " (the variables disagree)");
  }
  auto topology = process_level_topology(f, "torch-env");
  if (!topology) return topology.error();
  Topology& t = *topology;
  t.notes.insert(t.notes.end(), notes.begin(), notes.end());
  if (auto error = read_master_env(env, t)) return *error;
  t.reason = "RANK and WORLD_SIZE are set: a torch.distributed env:// launch (Azure ML PyTorch)";
  return Detected{std::move(t)};
}

bool node_present(const Env& env) {
  return has(env, "NODE_RANK") && has(env, "MASTER_ADDR") && !has(env, "RANK");
}

Result<Detected> node_read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  auto node_rank = require_number(env, "NODE_RANK", 0, kMaxCount);
  if (!node_rank) return node_rank.error();
  auto world = optional_number(env, "WORLD_SIZE", 1, kMaxCount);
  if (!world) return world.error();
  std::optional<int> nnodes = ctx.overrides.nnodes ? ctx.overrides.nnodes : *world;
  // An elastic range (--nnodes MIN:MAX) takes the place of both: the rendezvous gives them.
  if (ctx.overrides.nnodes_range) nnodes = ctx.overrides.nnodes_range->max;
  if (!nnodes) return missing("WORLD_SIZE", "the number of nodes, one launcher each (or --nnodes)");
  if (*node_rank >= *nnodes && !ctx.overrides.nnodes_range) {
    return invalid("NODE_RANK", std::to_string(*node_rank),
                   "a node rank below the node count " + std::to_string(*nnodes));
  }
  Topology t;
  if (auto error = read_master_env(env, t)) return *error;
  t.source = "torch-env";
  t.launch = Launch::per_node;
  t.nnodes = *nnodes;
  t.node_rank = *node_rank;
  NprocGuess guess = auto_nproc_per_node(env, ctx.machine);
  t.nproc_per_node = guess.count;
  t.world_size = t.nnodes * t.nproc_per_node;
  t.reason = "NODE_RANK and MASTER_ADDR are set without RANK: one launcher per node";
  return Detected{std::move(t)};
}

}  // namespace

const Source kTorchEnvProcessSource{"torch-env", process_present, process_read};
const Source kTorchEnvNodeSource{"torch-env", node_present, node_read};

}  // namespace aml
