// Source 7: Kubeflow PyTorchJob / TrainJob (the PET_* variables torchrun reads in a pod), and a
// TrainJob of Kubeflow Trainer's JAX runtime (JAX_NUM_PROCESSES, JAX_PROCESS_ID and
// JAX_COORDINATOR_ADDRESS, one JAX process a pod). There RANK is the pod index and WORLD_SIZE
// may count pods: they are never read here.
#include "topology/host_port.hpp"
#include "topology/master.hpp"
#include "topology/nproc.hpp"
#include "topology/numbers.hpp"
#include "topology/rdzv_backend.hpp"
#include "topology/sources.hpp"

namespace aml {
namespace {

bool jax_runtime(const Env& env) {
  return has(env, "JAX_NUM_PROCESSES") && has(env, "JAX_PROCESS_ID") &&
         has(env, "JAX_COORDINATOR_ADDRESS");
}

bool present(const Env& env) {
  return has(env, "PET_NNODES") || has(env, "PET_NODE_RANK") || jax_runtime(env);
}

// "N", or "min:max" for an elastic job (the training operator's elasticPolicy). --nnodes
// replaces it (apply_launch_rule).
struct NodeCount {
  int nnodes = 1;
  std::optional<NodeRange> range;
};

Result<NodeCount> read_nnodes(const DetectContext& ctx) {
  const std::string* text = find(ctx.env, "PET_NNODES");
  if (text == nullptr) {
    if (ctx.overrides.nnodes || ctx.overrides.nnodes_range) return NodeCount{};
    return missing("PET_NNODES", "the number of nodes (or --nnodes)");
  }
  auto range = parse_node_range("PET_NNODES", *text);
  if (!range) return range.error();
  if (range->min == range->max && text->find(':') == std::string::npos) {
    return NodeCount{range->min, std::nullopt};
  }
  return NodeCount{range->max, *range};
}
Result<int> read_nproc(const DetectContext& ctx) {
  const std::string* text = find(ctx.env, "PET_NPROC_PER_NODE");
  if (text == nullptr || *text == "auto") return auto_nproc_per_node(ctx.env, ctx.machine).count;
  if (*text == "cpu") return ctx.machine.cpu_count ? ctx.machine.cpu_count() : 1;
  if (*text == "gpu") {
    NprocGuess guess = auto_nproc_per_node(ctx.env, ctx.machine);
    if (guess.gpus == 0) {
      return invalid("PET_NPROC_PER_NODE", *text,
                     "a GPU on this node (none is visible), or a number");
    }
    return guess.count;
  }
  auto n = parse_number("PET_NPROC_PER_NODE", *text, 1, kMaxCount);
  if (!n) return invalid("PET_NPROC_PER_NODE", *text, "auto, gpu, cpu or a whole number >= 1");
  return *n;
}

// The JAX runtime's pod: a node of JAX_NUM_PROCESSES, whose launchers meet at the coordinator's
// address (its port is the job's service's; the workers' coordinator gets a port of its own).
Result<Detected> read_jax_runtime(const DetectContext& ctx) {
  const Env& env = ctx.env;
  auto nnodes = parse_number("JAX_NUM_PROCESSES", *find(env, "JAX_NUM_PROCESSES"), 1, kMaxCount);
  if (!nnodes) return nnodes.error();
  auto node_rank = parse_number("JAX_PROCESS_ID", *find(env, "JAX_PROCESS_ID"), 0, kMaxCount);
  if (!node_rank) return node_rank.error();
  if (*node_rank >= *nnodes) {
    return invalid("JAX_PROCESS_ID", std::to_string(*node_rank),
                   "a process id below JAX_NUM_PROCESSES " + std::to_string(*nnodes));
  }
  auto coordinator =
      split_host_port("JAX_COORDINATOR_ADDRESS", *find(env, "JAX_COORDINATOR_ADDRESS"));
  if (!coordinator) return coordinator.error();
  Topology t;
  t.source = "kubeflow";
  t.launch = Launch::per_node;
  t.nnodes = *nnodes;
  t.node_rank = *node_rank;
  t.master_addr = coordinator->host;
  t.master_port = coordinator->port.value_or(kTorchDefaultPort);
  t.nproc_per_node = auto_nproc_per_node(env, ctx.machine).count;
  t.world_size = t.nnodes * t.nproc_per_node;
  t.reason =
      "JAX_NUM_PROCESSES / JAX_PROCESS_ID / JAX_COORDINATOR_ADDRESS are set: a Kubeflow TrainJob "
      "pod of the JAX runtime, a node each";
  return Detected{std::move(t), "JAX_COORDINATOR_ADDRESS"};
}

Result<Detected> read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  if (!has(env, "PET_NNODES") && !has(env, "PET_NODE_RANK")) return read_jax_runtime(ctx);
  auto nnodes = read_nnodes(ctx);
  if (!nnodes) return nnodes.error();
  auto node_rank = optional_number(env, "PET_NODE_RANK", 0, kMaxCount);
  if (!node_rank) return node_rank.error();
  auto nproc = read_nproc(ctx);
  if (!nproc) return nproc.error();

  Topology t;
  t.source = "kubeflow";
  t.launch = Launch::per_node;
  t.nnodes = nnodes->nnodes;
  t.elastic = nnodes->range;
  // "2:2" with the pod's node rank given is a fixed-size job.
  if (t.elastic && t.elastic->min == t.elastic->max && node_rank->has_value()) t.elastic.reset();
  t.node_rank = node_rank->value_or(0);
  // Kubeflow's rdzvBackend: c10d (node 0's store, at PET_RDZV_ENDPOINT), or etcd (the
  // endpoint lists etcd's members; no node serves the rendezvous).
  const std::string* backend = find(env, "PET_RDZV_BACKEND");
  auto on_etcd = is_etcd_backend("PET_RDZV_BACKEND", backend ? *backend : "");
  if (!on_etcd) return on_etcd.error();
  // An elasticPolicy's pods carry the rendezvous endpoint (the store's host) instead of a
  // master; PET_RDZV_ID names the job at the rendezvous.
  const std::string* endpoint = find(env, "PET_RDZV_ENDPOINT");
  if (*on_etcd) {
    if (endpoint == nullptr) {
      return missing("PET_RDZV_ENDPOINT", "etcd's members (PET_RDZV_BACKEND=" + *backend + ")");
    }
    auto members = etcd_endpoints("PET_RDZV_ENDPOINT", *endpoint);
    if (!members) return members.error();
    auto first = split_host_port("PET_RDZV_ENDPOINT", members->front());
    if (!first) return first.error();
    // Where the launchers look for their way out (the route to it); the workers' MASTER_ADDR
    // is each round's node 0, given at the rendezvous.
    t.master_addr = first->host;
    t.master_port = first->port.value_or(kEtcdDefaultPort);
    t.notes.push_back("PET_RDZV_BACKEND=" + *backend + ": the rendezvous is kept in etcd at " +
                      *endpoint + "; the workers' MASTER_ADDR is each round's node 0");
  } else if (endpoint != nullptr) {
    auto split = split_host_port("PET_RDZV_ENDPOINT", *endpoint);
    if (!split) return split.error();
    t.master_addr = split->host;
    t.master_port = split->port.value_or(kRendezvousDefaultPort);
  } else {
    auto addr = first_host(env, {"PET_MASTER_ADDR", "MASTER_ADDR"});
    if (!addr) return addr.error();
    auto port = has(env, "PET_MASTER_PORT") ? read_port_or(env, "PET_MASTER_PORT", 0)
                                            : read_port_or(env, "MASTER_PORT", kTorchDefaultPort);
    if (!port) return port.error();
    t.master_addr = addr->value_or("");
    t.master_port = *port;
  }
  if (const std::string* id = find(env, "PET_RDZV_ID")) t.run_id = *id;
  if (t.elastic) {
    if (node_rank->has_value()) {
      t.notes.push_back("PET_NODE_RANK=" + std::to_string(**node_rank) +
                        " is not used: an elastic job's nodes get their ranks at the rendezvous");
    }
  } else if (t.node_rank >= t.nnodes) {
    return invalid("PET_NODE_RANK", std::to_string(t.node_rank),
                   "a node rank below the node count " + std::to_string(t.nnodes));
  }
  t.nproc_per_node = *nproc;
  t.world_size = t.nnodes * t.nproc_per_node;
  t.reason = "PET_NNODES / PET_NODE_RANK are set: a Kubeflow PyTorchJob or TrainJob pod";
  return Detected{std::move(t), "PET_RDZV_ENDPOINT, PET_MASTER_ADDR or MASTER_ADDR"};
}

}  // namespace

const Source kKubeflowSource{"kubeflow", present, read};

}  // namespace aml
