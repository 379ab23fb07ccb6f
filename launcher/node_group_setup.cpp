#include "node_group_setup.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "etcd/etcd_access.hpp"
#include "rendezvous_engine.hpp"
#include "store/launchers/handshake.hpp"
#include "store/launchers/munge_credential.hpp"
#include "topology/rdzv_backend.hpp"
#include "util/hex.hpp"

namespace aml {
namespace {

// The backend by name, with etcd's members (no access settings yet).
Result<RendezvousBackend> rendezvous_backend_named(const Options& options, const Env& env) {
  RendezvousBackend backend;
  const bool from_flag = !options.rdzv_backend.empty();
  const auto named = env.find("PET_RDZV_BACKEND");
  const std::string name = from_flag            ? options.rdzv_backend
                           : named != env.end() ? named->second
                                                : "";
  const std::string variable = from_flag ? "--rdzv-backend" : "PET_RDZV_BACKEND";
  auto on_etcd = is_etcd_backend(variable, name);
  if (!on_etcd) return on_etcd.error();
  if (!*on_etcd) return backend;
  backend.kind = RendezvousBackend::Kind::etcd;
  if (!options.etcd_endpoints.empty()) {
    backend.endpoints = options.etcd_endpoints;
    return backend;
  }
  const auto listed = env.find("PET_RDZV_ENDPOINT");
  if (listed == env.end()) {
    return missing("--rdzv-endpoint",
                   "etcd's members (HOST:PORT,...) for " + variable + "=" + name);
  }
  auto members = etcd_endpoints("PET_RDZV_ENDPOINT", listed->second);
  if (!members) return members.error();
  backend.endpoints = *members;
  return backend;
}

}  // namespace

// The launchers of one job meet as a group (DESIGN §5): the nodes of a per-node launch on
// several nodes; the ranks of a per-process launch, one launcher each (srun per task, mpirun
// per rank, Azure ML per-process), unless --no-group. Not where the scheduler's MASTER_PORT is
// already somebody's: torchrun's own store (aml-launch inside torchrun), the TF_CONFIG servers',
// or an outer aml-launch's.
bool joins_group(const Options& options, const Topology& t) {
  if (t.launch == Launch::per_node) return t.nnodes > 1;
  if (options.no_group || options.exec || t.world_size < 2 || t.master_addr.empty()) return false;
  return t.source != "torchrun" && t.source != "tf-config" && t.source != "aml-launch";
}

Result<JobAuth> job_auth_for(const Options& options, const Topology& t, Env& env) {
  const bool has_store = joins_group(options, t);
  // Munge is asked only where it would be used: a job with a store, under Slurm.
  auto auth = JobAuth::resolve(options.rdzv_secret_file, env,
                               has_store ? std::function<Result<bool>()>(store::munge_available)
                                         : std::function<Result<bool>()>());
  for (std::string_view variable : {kSecretVariable, kSecretFileVariable}) {
    unsetenv(std::string(variable).c_str());
    env.erase(std::string(variable));
  }
  if (!auth) return auth.error();
  const bool required = options.require_auth || require_auth_from(env);
  if (!auth->exposure().empty()) {
    if (required) {
      return invalid(options.require_auth ? "--require-auth" : std::string(kRequireAuthVariable),
                     "set", "a job secret only its owner can read or replace: " + auth->exposure());
    }
    // Once a job where a store uses it: each node's launcher, or rank 0's of a per-process one.
    if (has_store && (t.launch != Launch::per_process || t.rank == 0)) {
      std::cerr << "aml-launch: warning: " + auth->exposure() + "; --require-auth refuses it\n";
    }
  }
  if (has_store && auth->source() == JobAuth::Source::none && required) {
    return invalid(options.require_auth ? "--require-auth" : std::string(kRequireAuthVariable),
                   "set",
                   "a job secret on every node (--rdzv-secret-file FILE, AML_LAUNCH_SECRET_FILE "
                   "or AML_LAUNCH_SECRET), or munge under Slurm: this job would let anyone who "
                   "reaches its store join or stop it");
  }
  return auth;
}

Result<RendezvousBackend> rendezvous_backend_for(const Options& options, Env& env) {
  auto backend = rendezvous_backend_named(options, env);
  // The etcd password never reaches a worker, whichever backend holds the job.
  const auto password = env.find(etcd::kPasswordVariable);
  const Env with_password =
      password != env.end() ? Env{{password->first, password->second}} : Env{};
  unsetenv(std::string(etcd::kPasswordVariable).c_str());
  env.erase(std::string(etcd::kPasswordVariable));
  if (!backend || backend->kind != RendezvousBackend::Kind::etcd) return backend;
  const auto conf_env = env.find("PET_RDZV_CONF");
  const bool conf_flag = !options.rdzv_conf.empty() || conf_env == env.end();
  const std::string conf = conf_flag ? options.rdzv_conf : conf_env->second;
  bool https = options.etcd_https;
  if (options.etcd_endpoints.empty()) {
    auto listed = etcd_endpoints_use_tls("PET_RDZV_ENDPOINT", env.at("PET_RDZV_ENDPOINT"));
    if (!listed) return listed.error();
    https = *listed;
  }
  auto access =
      etcd::parse_access(conf_flag ? "--rdzv-conf" : "PET_RDZV_CONF", conf, https, with_password);
  if (!access) return access.error();
  backend->access = std::move(*access);
  return backend;
}

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "?";
  return host;
}

// A per-node launch on several nodes meets the other nodes through node 0's store.
Result<std::unique_ptr<NodeGroup>> start_node_group(
    const Options& options, const LaunchPlan& plan, const PlanInputs& inputs, const JobAuth& auth,
    const RendezvousBackend& backend, std::function<void(const std::string&)> say,
    std::shared_ptr<HealthWatch> health, const std::string& machine,
    std::function<void(const BenchedNode&)> benched,
    std::function<void(const char*, const std::string&)> waits) {
  const Topology& t = plan.topology;
  const bool per_process = t.launch == Launch::per_process;
  if (auth.source() == JobAuth::Source::none && (!per_process || t.rank == 0)) {
    // Once a job: by each node's launcher, or rank 0's of a per-process launch.
    std::cerr << "aml-launch: warning: " + auth.description() + "\n";
  }
  GroupOptions group;
  group.auth = auth;
  group.backend = backend;
  group.master_addr = t.master_addr;
  group.master_port = t.master_port != 0 ? t.master_port : kDefaultMasterPort;
  group.token = !options.rdzv_id.empty() ? options.rdzv_id : plan.run_id;
  // Per process, each rank's launcher is a member, with that one worker.
  group.self.node_rank = per_process ? t.rank : t.node_rank;
  group.self.on_node = per_process ? t.node_rank : -1;
  group.self.host = host_name();
  group.self.pid = getpid();
  group.self.nnodes = per_process ? t.world_size : t.nnodes;
  group.self.nproc_per_node = per_process ? 1 : t.nproc_per_node;
  group.self.run_id = plan.run_id;
  group.self.version = AML_VERSION;
  group.self.max_restarts = options.max_restarts;
  group.self.tf_ports = inputs.tf_ports;
  group.self.machine = machine;
  group.health = std::move(health);
  group.bench_after = options.bench_after;
  group.benched = std::move(benched);
  group.waits = std::move(waits);
  group.serve_workers_store = plan.worker_store.by_launcher;
  group.relay_asked = plan.worker_store.relay;
  group.jax_coordinator = plan.jax.has_value();
  group.watch_notices = !plan.notices.sources.empty() || !plan.notices.signal.empty();
  group.rdzv_timeout =
      std::chrono::milliseconds(static_cast<long long>(options.rdzv_timeout_seconds * 1000));
  group.node_timeout =
      std::chrono::milliseconds(static_cast<long long>(options.node_timeout_seconds * 1000));
  if (t.elastic) {
    group.elastic = t.elastic;
    group.last_call =
        std::chrono::milliseconds(static_cast<long long>(options.rdzv_last_call_seconds * 1000));
    // The node at the endpoint serves the store and is node 0; the others get theirs at each
    // round.
    group.self.node_rank = plan.elastic && plan.elastic->serves_store ? 0 : -1;
    group.admit_at_once = options.admit_at_once;
  }
  group.say = std::move(say);  // a waiting launcher says why; elastic: its rounds
  auto engine = rendezvous_engine_for(group);
  if (!engine) return engine.error();
  return NodeGroup::start(std::move(group), std::move(*engine));
}

void record_benched(const Options& options, const LaunchPlan& plan, const BenchedNode& node) {
  if (plan.topology.elastic) {
    // A fixed-size job's error names the node already: it ends the job.
    const std::string line =
        "aml-launch: benched " + node.host + " (" + node.addr +
        (node.node_rank >= 0 ? ", node rank " + std::to_string(node.node_rank) : std::string()) +
        "): " + node.reason + (node.figure.empty() ? "" : ": " + node.figure) +
        "; it holds no rank again in this job while a spare or MIN allows\n";
    (void)!write(STDERR_FILENO, line.data(), line.size());
  }
  if (options.bad_nodes_file.empty()) return;
  nlohmann::ordered_json entry = bench_json(node);
  entry["job"] = plan.run_id;
  const std::string text = entry.dump() + "\n";
  // One write of a line opened for appending: the lines of several jobs do not mix.
  const int fd =
      open(options.bad_nodes_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0 || write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    const std::string said = "aml-launch: cannot append to --bad-nodes-file " +
                             options.bad_nodes_file + ": " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, said.data(), said.size());
  }
  if (fd >= 0) close(fd);
}

// What the rendezvous of one round settled, for the workers of that round.
void apply_agreement(const Agreement& agreed, const NodeGroup& group, PlanInputs& inputs) {
  inputs.worker_master_port = agreed.worker_master_port;
  if (inputs.jax) inputs.jax->coordinator_port = agreed.jax_coordinator_port;
  inputs.store_address = group.store_address();
  inputs.store_token = group.token();
  const StoreCredentials workers = group.worker_credentials();
  inputs.worker_auth = store::auth_kind_name(static_cast<store::AuthKind>(workers.kind));
  inputs.worker_key_hex = to_hex(workers.key);
  inputs.tf_workers.clear();
  if (inputs.tf_ports.empty()) return;
  for (const NodeInfo& node : agreed.nodes) {
    for (int port : node.tf_ports)
      inputs.tf_workers.push_back(node.addr + ":" + std::to_string(port));
  }
}

bool relays_workers_store(const LaunchPlan& plan, const PlanInputs& inputs, const Topology& round) {
  return plan.worker_store.by_launcher && !inputs.per_process_group &&
         round.launch == Launch::per_node && round.node_rank != 0;
}

}  // namespace aml
