#include "plan/jax_env.hpp"

#include <string>

namespace aml {

void add_jax_env(const JaxPlan& jax, const Topology& t, bool virtual_local_rank, int rank,
                 int local_rank, EnvList& env) {
  auto set = [&env](const char* name, std::string value) {
    env.emplace_back(name, std::move(value));
  };
  if (jax.coordinator_port != 0) {
    const std::string port = std::to_string(jax.coordinator_port);
    set("JAX_COORDINATOR_ADDRESS", jax.coordinator_host + ":" + port);
    // JAX's own default is every interface ("[::]"): node 0's job address is enough.
    set("JAX_COORDINATOR_BIND_ADDRESS", jax.bind_host + ":" + port);
  }
  set("JAX_NUM_PROCESSES", std::to_string(t.world_size));
  set("JAX_PROCESS_ID", std::to_string(rank));
  // The worker's GPU as placement has it (a rank's GPU is its CUDA_VISIBLE_DEVICES entry, else
  // its local rank): JAX numbers the devices it sees.
  if (virtual_local_rank || jax.gpus == 1) {
    set("JAX_LOCAL_DEVICE_IDS", "0");
  } else if (jax.gpus > 1 && local_rank < jax.gpus) {
    set("JAX_LOCAL_DEVICE_IDS", std::to_string(local_rank));
  }
  set("PYTHONPATH",
      jax.pythonpath.empty() ? jax.plugin_dir : jax.plugin_dir + ":" + jax.pythonpath);
}

}  // namespace aml
