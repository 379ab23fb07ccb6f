#include "plan/launch_plan.hpp"

namespace aml {

LaunchPlan build_plan(const Topology& topology, const PlanInputs& inputs) {
  LaunchPlan plan;
  plan.topology = topology;
  plan.command = inputs.command;
  plan.program = inputs.program;
  plan.term_timeout_seconds = inputs.term_timeout_seconds;
  plan.notices = inputs.notices;
  plan.flag_notes = inputs.flag_notes;
  plan.run_id = !inputs.run_id.empty() ? inputs.run_id : topology.run_id;
  if (plan.topology.master_port == 0) plan.topology.master_port = inputs.free_port;
  // Every worker of every node meets at the job's port (DESIGN §3): on several nodes the
  // launchers' store shares it with torch's door. Known only at the rendezvous under etcd (each
  // round's node 0 serves the store at a port of its own), where rank 0's worker hosts torch's
  // store (node 0 picks it a port), and at this node's relay.
  const bool meets_other_nodes = (topology.launch == Launch::per_node && topology.nnodes > 1) ||
                                 inputs.per_process_group || topology.elastic.has_value();
  const bool on_etcd = inputs.rendezvous && inputs.rendezvous->backend == "etcd";
  const bool at_store_port =
      inputs.worker_store.by_launcher && !on_etcd && inputs.worker_master_addr.empty();
  plan.worker_master_port = inputs.worker_master_port != 0        ? inputs.worker_master_port
                            : !meets_other_nodes || at_store_port ? plan.topology.master_port
                                                                  : 0;  // given at the rendezvous

  plan.worker_master_addr = inputs.worker_master_addr;
  plan.jax = inputs.jax;
  plan.worker_store = inputs.worker_store;

  const bool want_ifname = topology.nnodes > 1 && !inputs.route_ifname.empty() &&
                           !(inputs.nccl_ifname_set && inputs.gloo_ifname_set);
  if (want_ifname) plan.socket_ifname = inputs.route_ifname;
  plan.socket_ifname_reason = topology.nnodes > 1 ? inputs.route_reason : "single node: not needed";

  plan.elastic = inputs.elastic;
  if (topology.launch == Launch::per_process) {
    plan.workers.push_back({topology.rank, topology.local_rank, {}, std::nullopt});
  } else {
    for (int local = 0; local < topology.nproc_per_node; ++local) {
      plan.workers.push_back(
          {topology.node_rank * topology.nproc_per_node + local, local, {}, std::nullopt});
    }
  }
  plan.placement = inputs.placement;
  plan.memory_policy = inputs.memory_policy;
  plan.store_auth = inputs.store_auth;
  plan.rendezvous = inputs.rendezvous;
  for (WorkerPlan& worker : plan.workers) {
    if (inputs.placement) {
      for (const RankPlacement& placed : inputs.placement->ranks) {
        if (placed.local_rank == worker.local_rank) worker.placement = placed;
      }
    }
    worker.env = worker_env(plan, inputs, worker);
  }
  if (!inputs.tf_ports.empty() && inputs.tf_workers.empty() && topology.nnodes > 1) {
    // As with MASTER_PORT: the other nodes' addresses and ports are known only once all met.
    std::string ports;
    for (int port : inputs.tf_ports) ports += (ports.empty() ? "" : ", ") + std::to_string(port);
    plan.topology.notes.push_back(
        "TF_CONFIG is written at the rendezvous, naming every worker of all " +
        std::to_string(topology.nnodes) + " nodes (this node's workers listen on ports " + ports +
        ")");
  }
  return plan;
}

}  // namespace aml
