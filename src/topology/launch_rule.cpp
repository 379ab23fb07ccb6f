#include <string>

#include "topology/detect.hpp"
#include "topology/master.hpp"

namespace aml {
namespace {

// A process-level source with one process on this node and an explicit --nproc-per-node N:
// the scheduler's ranks are node ranks (Azure ML's process_count_per_node=1), spawn N here.
bool becomes_per_node(const Topology& t) {
  return t.nproc_per_node == 1 && t.local_rank == 0 && t.rank >= 0;
}

// Only the flags can make the node rank reach the node count: every source checks its own.
Result<Topology> check_node_rank(Topology t, const Overrides& o) {
  if (t.node_rank < t.nnodes) return t;
  return invalid(o.node_rank ? "--node-rank" : "--nnodes",
                 std::to_string(o.node_rank ? t.node_rank : t.nnodes),
                 "a node rank below the node count (node rank " + std::to_string(t.node_rank) +
                     ", " + std::to_string(t.nnodes) + " nodes)");
}

Result<Topology> apply_per_process_flags(Topology t, const Overrides& o) {
  if (o.node_rank) {
    t.node_rank = *o.node_rank;
    t.rank = t.node_rank * t.nproc_per_node + t.local_rank;
  }
  if (o.nnodes) {
    t.nnodes = *o.nnodes;
    t.world_size = t.nnodes * t.nproc_per_node;
  }
  return check_node_rank(std::move(t), o);
}

// An elastic job: its node count and this node's rank come at each round's rendezvous,
// through the store at the rendezvous endpoint (MASTER_ADDR:MASTER_PORT).
Result<Topology> elastic(Topology t, const Overrides& o, const std::string& master_variables) {
  const NodeRange range = *t.elastic;
  const std::string text = std::to_string(range.min) + ":" + std::to_string(range.max);
  if (t.launch != Launch::per_node) {
    return invalid("--nnodes", text,
                   "a per-node launch: " + t.source +
                       " started every rank itself, so the job's size is the scheduler's (an "
                       "elastic range needs one launcher per node)");
  }
  if (o.node_rank) {
    return invalid("--node-rank", std::to_string(*o.node_rank),
                   "no node rank with --nnodes " + text +
                       ": an elastic job's nodes get their node ranks at the rendezvous");
  }
  if (o.master_addr) t.master_addr = *o.master_addr;
  if (o.master_port) t.master_port = *o.master_port;
  if (o.free_master_port) {
    return invalid("--rdzv-endpoint", t.master_addr + ":0",
                   "a port the other nodes can find: port 0 (a free one) is for a job of one "
                   "node (--nnodes 1 or --standalone)");
  }
  if (t.master_addr.empty()) {
    return missing(master_variables + " (or --rdzv-endpoint)",
                   "the rendezvous endpoint of an elastic job (--nnodes " + text +
                       "): the node at that address serves the store");
  }
  if (t.master_port == 0) t.master_port = kRendezvousDefaultPort;
  t.nnodes = range.max;
  t.node_rank = -1;
  t.world_size = -1;
  return t;
}

}  // namespace

Result<Topology> apply_launch_rule(Detected detected, const Overrides& o) {
  if (detected.unless_nnodes_given && !o.nnodes && !o.nnodes_range) {
    return *detected.unless_nnodes_given;
  }
  Topology t = std::move(detected.topology);
  // A launcher inside a launcher (aml-launch as the image's entry point and in the command):
  // it is one of the outer launcher's workers. Workers of its own would be a second job inside
  // that rank, at the outer job's port: refused, whatever the count.
  if (t.source == "aml-launch" && (o.nproc_per_node || o.nnodes_range)) {
    const std::string flag = o.nproc_per_node ? "--nproc-per-node" : "--nnodes";
    return invalid(flag,
                   o.nproc_per_node ? std::to_string(*o.nproc_per_node)
                                    : std::to_string(o.nnodes_range->min) + ":" +
                                          std::to_string(o.nnodes_range->max),
                   "no " + flag + " here: this process is a worker that aml-launch started (" +
                       std::to_string(t.nproc_per_node) +
                       " on this node). Give aml-launch once: as the image's entry point "
                       "or in the job's command, not both (without " +
                       flag + ", this one runs its command once, as that worker)");
  }
  // An elastic range asks for one launcher per node too (srun -N 3 aml-launch --nnodes 2:2).
  const bool elastic_node_launch = o.nnodes_range && becomes_per_node(t);
  if (t.launch == Launch::per_process && o.nproc_counted && o.nproc_per_node &&
      !becomes_per_node(t)) {
    // --nproc-per-node auto/gpu/cpu where the scheduler started this node's processes itself:
    // they are the workers.
    if (*o.nproc_per_node != t.nproc_per_node) {
      t.notes.push_back("--nproc-per-node counted " + std::to_string(*o.nproc_per_node) + ", but " +
                        t.source + " started " + std::to_string(t.nproc_per_node) +
                        " processes on this node itself, one per rank: each runs its command "
                        "once");
    }
    Overrides kept = o;
    kept.nproc_per_node.reset();
    kept.nproc_counted = false;
    return apply_launch_rule(Detected{std::move(t), detected.master_variables}, kept);
  }
  if (t.launch == Launch::per_process &&
      ((o.nproc_per_node && *o.nproc_per_node != t.nproc_per_node) || elastic_node_launch)) {
    if (!becomes_per_node(t)) {
      return invalid("--nproc-per-node", std::to_string(*o.nproc_per_node),
                     "no --nproc-per-node here: " + t.source + " already started " +
                         std::to_string(t.nproc_per_node) +
                         " processes on this node, one per rank (it may be given only as " +
                         std::to_string(t.nproc_per_node) + ")");
    }
    t.launch = Launch::per_node;
    t.nnodes = t.world_size;
    t.node_rank = t.rank;
    t.rank = t.local_rank = -1;
    t.notes.push_back(o.nproc_per_node ? "one process per node with --nproc-per-node " +
                                             std::to_string(*o.nproc_per_node) +
                                             ": the scheduler's ranks are node ranks"
                                       : "one process per node with an elastic --nnodes: the "
                                         "scheduler's processes are the nodes' launchers");
  }
  if (t.launch == Launch::per_node) {
    if (o.nnodes) t.nnodes = *o.nnodes;
    if (o.node_rank) t.node_rank = *o.node_rank;
    if (o.nproc_per_node) t.nproc_per_node = *o.nproc_per_node;
    t.world_size = t.nnodes * t.nproc_per_node;
  }
  if (o.nnodes) t.elastic.reset();
  if (o.nnodes_range) t.elastic = *o.nnodes_range;
  if (t.elastic) return elastic(std::move(t), o, detected.master_variables);
  auto adjusted = t.launch == Launch::per_node || t.rank < 0
                      ? check_node_rank(std::move(t), o)
                      : apply_per_process_flags(std::move(t), o);
  if (!adjusted) return adjusted.error();
  t = std::move(*adjusted);
  if (o.master_addr) t.master_addr = *o.master_addr;
  if (o.master_port) t.master_port = *o.master_port;
  if (o.free_master_port) {
    if (t.nnodes > 1) {
      return invalid("--rdzv-endpoint", t.master_addr + ":0",
                     "a port the other nodes can find: port 0 (a free one) is for a job of one "
                     "node (--nnodes 1 or --standalone)");
    }
    t.master_port = 0;  // the launcher takes a free one
  }
  if (t.master_addr.empty()) {
    if (t.nnodes > 1) {
      return missing(detected.master_variables,
                     "a " + std::to_string(t.nnodes) +
                         "-node job needs the address of node 0 (or --master-addr)");
    }
    t.master_addr = "127.0.0.1";
  }
  return t;
}

}  // namespace aml
