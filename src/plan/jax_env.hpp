// What a worker of --framework jax gets (DESIGN §3): the names Kubeflow Trainer's JAX runtime
// uses, which aml-launch's cluster environment for JAX reads (python/aml_launch/jax_cluster.py),
// and that environment first on its PYTHONPATH.
#pragma once

#include "plan/launch_plan.hpp"

namespace aml {

void add_jax_env(const JaxPlan& jax, const Topology& t, bool virtual_local_rank, int rank,
                 int local_rank, EnvList& env);

}  // namespace aml
