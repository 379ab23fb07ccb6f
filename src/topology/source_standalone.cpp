// Source 12: no scheduler at all: one node (or --nnodes's), workers on this machine, master
// 127.0.0.1 (or --master-addr).
#include "topology/nproc.hpp"
#include "topology/numbers.hpp"
#include "topology/sources.hpp"

namespace aml {
namespace {

bool present(const Env&) { return true; }

Result<Detected> read(const DetectContext& ctx) {
  Topology t;
  t.source = "standalone";
  t.launch = Launch::per_node;
  // An explicit --nproc-per-node N needs no look at this machine's GPUs.
  t.nproc_per_node = ctx.overrides.nproc_per_node ? *ctx.overrides.nproc_per_node
                                                  : auto_nproc_per_node(ctx.env, ctx.machine).count;
  t.world_size = t.nproc_per_node;
  // --nnodes 2 without a scheduler: the flags name the nodes, and the reason must not say one.
  const bool nodes_given =
      ctx.overrides.nnodes_range || (ctx.overrides.nnodes && *ctx.overrides.nnodes > 1);
  t.reason = nodes_given ? "no scheduler variables found: the node count from --nnodes"
                         : "no scheduler variables found: a single node";
  Detected detected;
  if (has(ctx.env, "SLURM_JOB_ID") && !inside_slurm_step(ctx.env)) {
    t.notes.push_back("inside a Slurm allocation but outside a job step: run under srun for ranks");
    // A batch script (or salloc's shell) of a multi-node allocation that forgot srun would
    // train on this node alone, while the others idle.
    auto nodes = optional_number(ctx.env, "SLURM_NNODES", 1, kMaxCount);
    if (nodes.ok() && nodes->value_or(1) > 1) {
      const std::string count = std::to_string(**nodes);
      const std::string why = "this runs in an allocation of " + count +
                              " nodes (SLURM_NNODES=" + count +
                              ") but outside any job step, so it would train on this node "
                              "alone: start one launcher a node with srun (srun "
                              "--ntasks-per-node 1 aml-launch ...), or give --nnodes to run here "
                              "as it is";
      const std::string* step = find(ctx.env, "SLURM_STEP_ID");
      detected.unless_nnodes_given =
          step ? invalid("SLURM_STEP_ID", *step, "a job step's id (srun's): " + why)
               : missing("SLURM_STEP_ID", why);
    }
  }
  detected.topology = std::move(t);
  return detected;
}

}  // namespace

const Source kStandaloneSource{"standalone", present, read};

}  // namespace aml
