// The facts gathered from the options, the environment, the machine and the network before the
// plan is built (DESIGN §1: build_plan itself stays pure).
#include "plan_inputs.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "hang_files.hpp"
#include "net/free_port.hpp"
#include "net/local_host.hpp"
#include "net/route_interface.hpp"
#include "node_group_setup.hpp"
#include "placement_setup.hpp"

namespace aml {

Result<PlanInputs> gather_inputs(const Options& options, const Topology& topology, const Env& env,
                                 const Machine& machine, const JobAuth& auth,
                                 const RendezvousBackend& backend) {
  PlanInputs inputs;
  if (joins_group(options, topology)) {
    inputs.store_auth = StoreAuthPlan{auth.mode(), auth.description()};
    const bool on_etcd = backend.kind == RendezvousBackend::Kind::etcd;
    inputs.rendezvous = RendezvousPlan{backend.name(), backend.endpoints, backend.loss_means(),
                                       on_etcd ? backend.access.describe() : ""};
  }
  inputs.per_process_group =
      topology.launch == Launch::per_process && joins_group(options, topology);
  inputs.command = options.command;
  inputs.run_id = options.run_id;
  inputs.cpu_count = machine.cpu_count();
  inputs.omp_threads_set = has(env, "OMP_NUM_THREADS");
  inputs.nccl_ifname_set = has(env, "NCCL_SOCKET_IFNAME");
  inputs.gloo_ifname_set = has(env, "GLOO_SOCKET_IFNAME");
  inputs.python_unbuffered_set = has(env, "PYTHONUNBUFFERED");
  inputs.mkl_threads_set = has(env, "MKL_NUM_THREADS");
  inputs.ucx_devices_set = has(env, "UCX_NET_DEVICES");
  inputs.mpi_job = topology.source == "openmpi" || topology.source == "mpich" ||
                   options.preflight == "mpi" ||
                   std::any_of(env.begin(), env.end(),
                               [](const auto& entry) { return entry.first.starts_with("UCX_"); });
  auto placement = placement_for(options, topology, env);
  if (!placement) return placement.error();
  inputs.placement = std::move(*placement);
  inputs.memory_policy = options.memory_policy;
  if (inputs.run_id.empty() && topology.run_id.empty()) {
    if (topology.launch == Launch::per_node && topology.nnodes == 1) {
      // This launcher is the whole job: an id that names this launch.
      inputs.run_id = "aml-" + std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr));
    } else {
      // Several launchers (nodes, or the scheduler's ranks) must derive the same id, and
      // another job's a different one.
      inputs.run_id = !options.rdzv_id.empty() ? options.rdzv_id
                                               : "aml-" + topology.master_addr + "-" +
                                                     std::to_string(topology.master_port);
    }
  }
  inputs.hang_env = hang_environment(options, topology, env, inputs.run_id);
  inputs.max_restarts = options.max_restarts;
  if (topology.elastic) {
    ElasticPlan elastic;
    const LocalHost here = local_host(topology.master_addr);
    const bool on_etcd = backend.kind == RendezvousBackend::Kind::etcd;
    elastic.serves_store = here.local && !on_etcd;
    elastic.serves_reason = on_etcd ? "etcd holds the rendezvous: no node serves it" : here.reason;
    elastic.last_call_seconds = options.rdzv_last_call_seconds;
    elastic.admit_at_once = options.admit_at_once;
    elastic.max_restarts = options.max_restarts;
    elastic.rdzv_timeout_seconds = options.rdzv_timeout_seconds;
    elastic.node_timeout_seconds = options.node_timeout_seconds;
    inputs.elastic = elastic;
  }
  if (topology.master_port == 0) {
    auto port = free_tcp_port();
    if (!port) return port.error();
    inputs.free_port = *port;
  }
  if (options.framework == Framework::tensorflow && topology.launch == Launch::per_node) {
    // Ports on this node; on several nodes the rendezvous collects every node's.
    for (int i = 0; i < topology.nproc_per_node; ++i) {
      auto port = free_tcp_port();
      if (!port) return port.error();
      inputs.tf_ports.push_back(*port);
    }
  }
  if (topology.nnodes > 1 && !(inputs.nccl_ifname_set && inputs.gloo_ifname_set)) {
    RouteInterface route = route_interface_to(topology.master_addr);
    inputs.route_ifname = route.ifname;
    inputs.route_reason = route.reason;
  } else if (topology.nnodes > 1) {
    inputs.route_reason = "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME are already set";
  }
  return inputs;
}

}  // namespace aml
