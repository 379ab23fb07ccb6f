// The facts gathered from the options, the environment, the machine and the network before the
// plan is built (DESIGN §1: build_plan itself stays pure).
#include "plan_inputs.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>

#include "hang_files.hpp"
#include "jax_plugin.hpp"
#include "net/free_port.hpp"
#include "net/local_host.hpp"
#include "net/route_interface.hpp"
#include "node_group_setup.hpp"
#include "notice_setup.hpp"
#include "placement_setup.hpp"
#include "store/core/store_host.hpp"
#include "supervisor/exit_status.hpp"
#include "topology/nproc.hpp"

namespace aml {

namespace {

// A Kubeflow PyTorchJob's pod is <job>-worker-<i> (or -master-<i>): its job's name, with the
// namespace where the pod's service account shows it.
std::string kubeflow_job(const Env& env) {
  const std::string* pod = find(env, "HOSTNAME");
  if (pod == nullptr) return "";
  const std::size_t dash = pod->rfind('-');
  if (dash == std::string::npos || dash + 1 == pod->size() ||
      pod->find_first_not_of("0123456789", dash + 1) != std::string::npos) {
    return "";
  }
  const std::string role_and_job = pod->substr(0, dash);
  for (std::string_view role : {"-worker", "-master"}) {
    if (!role_and_job.ends_with(role) || role_and_job.size() == role.size()) continue;
    std::string job = role_and_job.substr(0, role_and_job.size() - role.size());
    std::ifstream file("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
    std::string space;
    if (file >> space) job = space + "/" + job;
    return "kubeflow-" + job;
  }
  return "";
}

// The id every launcher of a job derives alike, and another job a different one. Node 0's store
// is the job's own (its address and port name it); an etcd is shared by many jobs, so its id
// comes from the scheduler or the user, never from etcd's address.
Result<std::string> shared_run_id(const Options& options, const Topology& topology, const Env& env,
                                  const RendezvousBackend& backend) {
  if (!options.rdzv_id.empty()) return options.rdzv_id;
  if (backend.kind != RendezvousBackend::Kind::etcd) {
    return "aml-" + topology.master_addr + "-" + std::to_string(topology.master_port);
  }
  if (topology.source == "kubeflow") {
    std::string job = kubeflow_job(env);
    if (!job.empty()) return job;
  }
  return missing("--rdzv-id (or PET_RDZV_ID)",
                 "the job's id, the same on every node: every job that shares an etcd keeps its "
                 "rendezvous there under its id, and no scheduler gave one here (Slurm's job "
                 "step, Azure ML's run, a Kubeflow pod's job; Kubeflow's elasticPolicy.rdzvId "
                 "sets PET_RDZV_ID)");
}

}  // namespace

std::optional<Error> count_nproc_word(Options& options, const Env& env, const Machine& machine) {
  const std::string& word = options.nproc_word;
  if (word.empty()) return std::nullopt;
  int count = 0;
  if (word == "cpu") {
    count = std::max(1, machine.cpu_count ? machine.cpu_count() : 1);
  } else {
    const NprocGuess gpus = auto_nproc_per_node(env, machine);
    if (word == "gpu" && gpus.gpus == 0) {
      return invalid("--nproc-per-node", word,
                     "a visible GPU (" + std::string(gpus.why) +
                         "): auto starts one worker without a GPU, N starts N");
    }
    count = gpus.count;
  }
  options.overrides.nproc_per_node = count;
  options.overrides.nproc_counted = true;
  return std::nullopt;
}

// On node 0, where its hard descriptor limit cannot hold a connection a rank: what node 0 will
// do at the rendezvous (NodeGroup::relay_for), said in --dry-run. The other nodes cannot know
// node 0's limit before it.
std::optional<std::string> relay_on_node0(const Options& options, const Topology& t,
                                          const WorkerStorePlan& store) {
  if (!store.by_launcher || store.relay || t.launch != Launch::per_node || t.elastic ||
      t.node_rank != 0 || !joins_group(options, t))
    return std::nullopt;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_max == RLIM_INFINITY) return std::nullopt;
  if (holds_every_rank(limit.rlim_max, static_cast<std::uint64_t>(t.world_size),
                       static_cast<std::uint64_t>(t.nnodes)))
    return std::nullopt;
  return "node 0's hard descriptor limit (" + std::to_string(limit.rlim_max) +
         ") cannot hold a connection for each of the job's " + std::to_string(t.world_size) +
         " ranks: the other nodes' workers will reach it through their own launcher's relay "
         "(MASTER_ADDR 127.0.0.1, node 0's address in AML_LAUNCH_NODE0_ADDR)";
}

// Who serves the workers' torch store (DESIGN §3): a launcher that stays beside them and knows
// the job's hosts; rank 0's worker where no such launcher is there, or where asked.
WorkerStorePlan worker_store_for(const Options& options, const Topology& t) {
  if (options.torch_hosts_worker_store) return {false, "--worker-store torch"};
  if (options.exec) return {false, "--exec: no launcher stays beside the workers"};
  if (t.source == "torchrun") return {false, "torchrun's, as it set it (its agent or rank 0)"};
  if (joins_group(options, t)) {
    if (options.relay_worker_store && t.launch == Launch::per_node) {
      return {true,
              "node 0's launcher, open to the job's hosts alone, new at each round; "
              "--worker-store relay: the other nodes' workers reach it through their own "
              "launcher (MASTER_ADDR 127.0.0.1, MASTER_PORT this node's relay, picked at each "
              "round; node 0's address in AML_LAUNCH_NODE0_ADDR), one connection a node",
              true};
    }
    return {true, std::string(t.launch == Launch::per_process ? "rank 0's" : "node 0's") +
                      " launcher, on the launchers' own port (one MASTER_PORT for every worker "
                      "of every node), open to the job's hosts alone, new at each round"};
  }
  if (t.launch == Launch::per_node || t.world_size == 1) {
    return {true, "this launcher, open to this host alone, new at each round"};
  }
  return {false, "a per-process launch whose launchers do not meet: none of them serves it"};
}

Result<PlanInputs> gather_inputs(const Options& options, const Topology& topology, const Env& env,
                                 const Machine& machine, const JobAuth& auth,
                                 const RendezvousBackend& backend) {
  PlanInputs inputs;
  if (joins_group(options, topology)) {
    inputs.store_auth = StoreAuthPlan{auth.mode(), auth.description()};
    const bool on_etcd = backend.kind == RendezvousBackend::Kind::etcd;
    inputs.rendezvous = RendezvousPlan{backend.name(), backend.endpoints, backend.loss_means(),
                                       on_etcd ? backend.access.describe() : ""};
  } else if (topology.launch == Launch::per_node) {
    // One node: a job without a secret says so too (DESIGN §5), and one with a secret is told
    // why it changes nothing here.
    constexpr std::string_view kLocal =
        "one node: its stores listen on 127.0.0.1, open to this host alone";
    inputs.store_auth = StoreAuthPlan{
        auth.mode(), auth.source() == JobAuth::Source::none
                         ? "no secret, none needed (" + std::string(kLocal) + ")"
                         : auth.description() + "; not needed on " + std::string(kLocal)};
  }
  inputs.per_process_group =
      topology.launch == Launch::per_process && joins_group(options, topology);
  inputs.worker_store = worker_store_for(options, topology);
  if (auto relay = relay_on_node0(options, topology, inputs.worker_store))
    inputs.worker_store.why += "; " + *relay;
  inputs.command = options.command;
  inputs.program = ProgramPlan{options.program_interpreter, options.program_about};
  inputs.term_timeout_seconds = options.term_timeout_seconds;
  inputs.flag_notes = options.torchrun_notes;
  for (NoticePlatform platform : notice_platforms(options, env, inputs.notices.why))
    inputs.notices.sources.emplace_back(to_string(platform));
  if (!inputs.notices.sources.empty()) inputs.notices.metadata_url = metadata_url(env);
  if (options.notice_signal != 0) inputs.notices.signal = signal_name(options.notice_signal);
  if (options.notice_to_workers != 0)
    inputs.notices.to_workers = signal_name(options.notice_to_workers);
  inputs.virtual_local_rank = options.virtual_local_rank;
  if (const std::string* devices = find(env, "CUDA_VISIBLE_DEVICES")) {
    std::size_t start = 0;
    while (!devices->empty() && start <= devices->size()) {
      const std::size_t comma = std::min(devices->find(',', start), devices->size());
      inputs.visible_devices.push_back(devices->substr(start, comma - start));
      start = comma + 1;
    }
  }
  inputs.nccl_async_set = has(env, "TORCH_NCCL_ASYNC_ERROR_HANDLING");
  inputs.agent_store_set = has(env, "TORCHELASTIC_USE_AGENT_STORE");
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
  // As torchrun has it, the rendezvous id is the run id the workers get.
  if (inputs.run_id.empty()) inputs.run_id = options.rdzv_id;
  if (inputs.run_id.empty() && topology.run_id.empty()) {
    if (topology.launch == Launch::per_node && topology.nnodes == 1) {
      // This launcher is the whole job: an id that names this launch.
      inputs.run_id = "aml-" + std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr));
    } else {
      // Several launchers (nodes, or the scheduler's ranks) must derive the same id, and
      // another job's a different one.
      auto id = shared_run_id(options, topology, env, backend);
      if (!id) return id.error();
      inputs.run_id = *id;
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
  if (topology.master_port == 0 && joins_group(options, topology)) {
    inputs.free_port = kDefaultMasterPort;
  } else if (topology.master_port == 0) {
    auto port = free_tcp_port();
    if (!port) return port.error();
    inputs.free_port = *port;
  }
  // Code in the field serves on rank 0 at MASTER_PORT+k: this launcher's picks keep off them.
  keep_ports_free_after(topology.master_port != 0 ? topology.master_port : inputs.free_port);
  if (inputs.worker_store.relay && !topology.elastic && topology.node_rank != 0) {
    inputs.worker_master_addr = "127.0.0.1";  // this node's relay, at a port of each round's
  }
  if (inputs.worker_store.by_launcher && !joins_group(options, topology)) {
    // One node: torch's store takes MASTER_PORT, so the rank library (aml::comm, aml-preflight)
    // meets at a store of this launcher's on loopback, as on several nodes at node 0's.
    auto port = free_tcp_port();
    if (!port) return port.error();
    inputs.local_store_port = *port;
    inputs.store_address = "127.0.0.1:" + std::to_string(*port);
    inputs.store_token = "local-" + std::to_string(*port);
    inputs.worker_auth = "none";
  }
  // Kubeflow Trainer's JAX runtime names JAX itself.
  const bool jax_runtime =
      !options.framework_given && topology.source == "kubeflow" && has(env, "JAX_NUM_PROCESSES");
  if (options.framework == Framework::jax || jax_runtime) {
    JaxPlan jax;
    jax.why = options.framework_given ? "--framework jax" : "Kubeflow Trainer's JAX runtime";
    jax.coordinator_host = topology.master_addr;
    jax.bind_host = listen_address_for(topology.master_addr, local_host(topology.master_addr));
    jax.plugin_dir = jax_plugin_dir();
    if (const std::string* path = find(env, "PYTHONPATH")) jax.pythonpath = *path;
    jax.gpus = !inputs.visible_devices.empty() ? static_cast<int>(inputs.visible_devices.size())
               : machine.nvidia_device_count   ? machine.nvidia_device_count()
                                               : 0;
    if (topology.launch == Launch::per_process && !joins_group(options, topology)) {
      // Each rank's launcher alone, meeting no other: the job's port, the same for all.
      jax.coordinator_port = topology.master_port;
    } else if (!joins_group(options, topology)) {
      // One launcher is the whole job.
      auto port = free_tcp_port();
      if (!port) return port.error();
      jax.coordinator_port = *port;
    }  // else node 0 picks it at each round's rendezvous
    inputs.jax = jax;
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
