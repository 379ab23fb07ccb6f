// Source 7: Kubeflow PyTorchJob / TrainJob (the PET_* variables torchrun reads in a pod).
// There RANK is the pod index and WORLD_SIZE may count pods: they are never read here.
#include "topology/master.hpp"
#include "topology/nproc.hpp"
#include "topology/numbers.hpp"
#include "topology/sources.hpp"

namespace aml {
namespace {

bool present(const Env& env) { return has(env, "PET_NNODES") || has(env, "PET_NODE_RANK"); }

// "N", or "min:max" for an elastic job: a fixed-size rendezvous needs min == max or --nnodes.
Result<std::optional<int>> read_nnodes(const DetectContext& ctx) {
  if (ctx.overrides.nnodes) return ctx.overrides.nnodes;
  const std::string* text = find(ctx.env, "PET_NNODES");
  if (text == nullptr) return missing("PET_NNODES", "the number of nodes (or --nnodes)");
  std::size_t colon = text->find(':');
  if (colon == std::string::npos) {
    auto n = parse_number("PET_NNODES", *text, 1, kMaxCount);
    if (!n) return n.error();
    return std::optional<int>(*n);
  }
  auto low = parse_number("PET_NNODES", text->substr(0, colon), 1, kMaxCount);
  auto high = parse_number("PET_NNODES", text->substr(colon + 1), 1, kMaxCount);
  if (!low || !high || *low > *high) {
    return invalid("PET_NNODES", *text, "a node count N or an elastic range min:max");
  }
  if (*low != *high) {
    return invalid("PET_NNODES", *text,
                   "a fixed node count: elastic ranges are not supported, give --nnodes");
  }
  return std::optional<int>(*low);
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

Result<Detected> read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  auto nnodes = read_nnodes(ctx);
  if (!nnodes) return nnodes.error();
  auto node_rank = optional_number(env, "PET_NODE_RANK", 0, kMaxCount);
  if (!node_rank) return node_rank.error();
  auto nproc = read_nproc(ctx);
  if (!nproc) return nproc.error();
  auto addr = first_host(env, {"PET_MASTER_ADDR", "MASTER_ADDR"});
  if (!addr) return addr.error();
  auto port = has(env, "PET_MASTER_PORT") ? read_port_or(env, "PET_MASTER_PORT", 0)
                                          : read_port_or(env, "MASTER_PORT", kTorchDefaultPort);
  if (!port) return port.error();

  Topology t;
  t.source = "kubeflow";
  t.launch = Launch::per_node;
  t.nnodes = nnodes->value_or(1);
  t.node_rank = node_rank->value_or(0);
  if (t.node_rank >= t.nnodes) {
    return invalid("PET_NODE_RANK", std::to_string(t.node_rank),
                   "a node rank below the node count " + std::to_string(t.nnodes));
  }
  t.nproc_per_node = *nproc;
  t.world_size = t.nnodes * t.nproc_per_node;
  t.master_addr = addr->value_or("");
  t.master_port = *port;
  t.reason = "PET_NNODES / PET_NODE_RANK are set: a Kubeflow PyTorchJob or TrainJob pod";
  return Detected{std::move(t), "PET_MASTER_ADDR or MASTER_ADDR"};
}

}  // namespace

const Source kKubeflowSource{"kubeflow", present, read};

}  // namespace aml
