#include <algorithm>
#include <string>
#include <vector>

#include "placement/rank_devices.hpp"
#include "plan/jax_env.hpp"
#include "plan/launch_plan.hpp"
#include "topology/worker_marker.hpp"

namespace aml {
namespace {

// TF_CONFIG naming every worker of the job, this worker as its task.
std::string tf_config_for(const LaunchPlan& plan, const PlanInputs& inputs, int rank) {
  std::vector<std::string> addresses = inputs.tf_workers;
  if (addresses.empty()) {
    for (int port : inputs.tf_ports) {
      addresses.push_back(plan.topology.master_addr + ":" + std::to_string(port));
    }
  }
  std::string workers;
  for (const std::string& address : addresses) {
    workers += std::string(workers.empty() ? "" : ", ") + "\"" + address + "\"";
  }
  return "{\"cluster\": {\"worker\": [" + workers +
         "]}, \"task\": {\"type\": \"worker\", \"index\": " + std::to_string(rank) + "}}";
}

}  // namespace

EnvList worker_env(const LaunchPlan& plan, const PlanInputs& inputs, const WorkerPlan& worker) {
  const int rank = worker.rank, local_rank = worker.local_rank;
  const Topology& t = plan.topology;
  EnvList env;
  auto set = [&env](std::string_view name, std::string value) {
    env.emplace_back(std::string(name), std::move(value));
  };
  auto number = [](int value) { return std::to_string(value); };
  if (rank >= 0) {
    set("RANK", number(rank));
    // --virtual-local-rank: every worker sees its own GPU alone, as device 0.
    set("LOCAL_RANK", number(inputs.virtual_local_rank ? 0 : local_rank));
    set("WORLD_SIZE", number(t.world_size));
    set("LOCAL_WORLD_SIZE", number(t.nproc_per_node));
    set("NODE_RANK", number(t.node_rank));
    set("GROUP_RANK", number(t.node_rank));
    set("GROUP_WORLD_SIZE", number(t.nnodes));
    set("ROLE_RANK", number(rank));
    set("ROLE_WORLD_SIZE", number(t.world_size));
  }
  set("ROLE_NAME", t.role);
  // Under etcd the workers meet at each round's node 0, known only once a round gives it.
  const bool master_unknown =
      inputs.rendezvous && inputs.rendezvous->backend == "etcd" && inputs.store_address.empty();
  if (!plan.worker_master_addr.empty()) {
    // This node's relay to node 0's store; node 0 itself stays reachable by name, for code
    // that meets rank 0's node by a way of its own.
    set("MASTER_ADDR", plan.worker_master_addr);
    set("AML_LAUNCH_NODE0_ADDR", t.master_addr);
  } else if (!master_unknown) {
    set("MASTER_ADDR", t.master_addr);
  }
  if (plan.worker_master_port != 0) set("MASTER_PORT", number(plan.worker_master_port));
  set(kWorkerMarker, "1");
  set(kSourceVariable, t.source);
  set(kRunIdVariable, plan.run_id);
  // torchrun's name for it: Lightning, accelerate and others take a run with it for a launch
  // that set every rank's variables (without it Lightning takes srun's SLURM_* for its own).
  set("TORCHELASTIC_RUN_ID", plan.run_id.empty() ? "none" : plan.run_id);
  set(kRestartCountVariable, number(inputs.restart_count));
  set("TORCHELASTIC_RESTART_COUNT", number(inputs.restart_count));
  set("TORCHELASTIC_MAX_RESTARTS", number(inputs.max_restarts));
  // True: every rank is a client of the store the launcher serves at MASTER_PORT, and rank 0
  // hosts none (torch's own switch, as torchrun >= 2.4 shares its agent's store).
  // Under torchrun (>= 2.4 shares its agent's store) its own word stands where no launcher here
  // serves the store.
  if (plan.worker_store.by_launcher || !inputs.agent_store_set) {
    set("TORCHELASTIC_USE_AGENT_STORE", plan.worker_store.by_launcher ? "True" : "False");
  }
  if (plan.jax && rank >= 0)
    add_jax_env(*plan.jax, t, inputs.virtual_local_rank, rank, local_rank, env);
  // torchrun sets it so that a failed NCCL collective ends the rank instead of hanging it.
  if (!inputs.nccl_async_set) set("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
  // --virtual-local-rank narrows the node's GPUs to the worker's own; a task the scheduler
  // gave GPUs of its own (srun --gpus-per-task) keeps them: nothing narrows the scheduler's list.
  const bool task_list = task_owns_devices(t.launch == Launch::per_process,
                                           inputs.visible_devices.size(), t.nproc_per_node);
  if (inputs.virtual_local_rank && rank >= 0 && !task_list) {
    const bool listed = local_rank < static_cast<int>(inputs.visible_devices.size());
    set("CUDA_VISIBLE_DEVICES", listed ? inputs.visible_devices[local_rank] : number(local_rank));
  }
  const RankPlacement* placed = worker.placement ? &*worker.placement : nullptr;
  const int bound_threads = placed != nullptr ? placed->threads : 0;
  if (!inputs.omp_threads_set) {
    // Each local worker gets its share of the CPUs, so that N workers do not each start a
    // thread per core and fight over them; a bound one, the cores it was given.
    set("OMP_NUM_THREADS",
        number(bound_threads > 0 ? bound_threads
                                 : std::max(1, inputs.cpu_count / std::max(1, t.nproc_per_node))));
  }
  if (bound_threads > 0 && !inputs.mkl_threads_set) set("MKL_NUM_THREADS", number(bound_threads));
  if (placed != nullptr && !placed->nic.empty() && inputs.mpi_job && !inputs.ucx_devices_set) {
    // UCX would spread over every NIC it finds; NCCL picks its own and is left alone.
    set("UCX_NET_DEVICES", placed->nic + ":" + number(placed->nic_port));
  }
  if (!inputs.python_unbuffered_set) {
    // A Python worker writing into a pipe would buffer its prints in blocks, and lose the
    // block when it dies; line by line is what people expect from a console.
    set("PYTHONUNBUFFERED", "1");
  }
  const bool tf_known = !inputs.tf_workers.empty() || (!inputs.tf_ports.empty() && t.nnodes == 1);
  if (tf_known && rank >= 0) set("TF_CONFIG", tf_config_for(plan, inputs, rank));
  if (!inputs.store_address.empty()) {
    set(kStoreVariable, inputs.store_address);
    set(kStoreTokenVariable, inputs.store_token);
    set(kStoreAuthVariable, inputs.worker_auth);
    if (!inputs.worker_key_hex.empty()) set(kStoreKeyVariable, inputs.worker_key_hex);
  }
  for (const auto& [name, value] : inputs.hang_env) set(name, value);
  if (!plan.socket_ifname.empty()) {
    if (!inputs.nccl_ifname_set) set("NCCL_SOCKET_IFNAME", plan.socket_ifname);
    if (!inputs.gloo_ifname_set) set("GLOO_SOCKET_IFNAME", plan.socket_ifname);
  }
  return env;
}

}  // namespace aml
