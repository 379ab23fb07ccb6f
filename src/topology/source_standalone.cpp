// Source 12: no scheduler at all: one node, workers on this machine, master 127.0.0.1.
#include "topology/nproc.hpp"
#include "topology/sources.hpp"

namespace aml {
namespace {

bool present(const Env&) { return true; }

Result<Detected> read(const DetectContext& ctx) {
  Topology t;
  t.source = "standalone";
  t.launch = Launch::per_node;
  NprocGuess guess = auto_nproc_per_node(ctx.env, ctx.machine);
  t.nproc_per_node = guess.count;
  t.world_size = t.nproc_per_node;
  t.reason = "no scheduler variables found: a single node";
  if (has(ctx.env, "SLURM_JOB_ID") && !has(ctx.env, "SLURM_STEP_ID")) {
    t.notes.push_back("inside a Slurm allocation but outside a job step: run under srun for ranks");
  }
  return Detected{std::move(t)};
}

}  // namespace

const Source kStandaloneSource{"standalone", present, read};

}  // namespace aml
