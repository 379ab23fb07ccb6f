// A launch plan: what every local worker runs with. A value that --dry-run prints and the
// supervisor executes (DESIGN §1 data flow).
#pragma once

#include <aml/topology.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "placement/placement.hpp"

namespace aml {

// Ordered name/value pairs: the variables a worker gets on top of the launcher's environment.
using EnvList = std::vector<std::pair<std::string, std::string>>;

struct WorkerPlan {
  int rank = -1;  // -1: a TensorFlow ps / evaluator task, outside the training world
  int local_rank = 0;
  EnvList env;
  std::optional<RankPlacement> placement;  // where it runs (--bind)
};

// An elastic job's rendezvous as this node meets it (DESIGN §5).
struct ElasticPlan {
  bool serves_store = false;  // the endpoint's host is this node: it serves the store, node 0
  std::string serves_reason;  // how that was found
  double last_call_seconds = 0;
  bool admit_at_once = false;  // a newcomer ends a round below the most nodes at once
  int max_restarts = 0;
  double rdzv_timeout_seconds = 0;
  double node_timeout_seconds = 0;
};

// How the job's store admits its members (DESIGN §5), where the job has a store.
struct StoreAuthPlan {
  std::string mode;   // "secret-file", "secret-env", "munge", "none"
  std::string about;  // for people: where the secret comes from, or what having none means
};

// Where the launchers of a multi-node job meet (DESIGN §5), where they do.
struct RendezvousPlan {
  std::string backend;                 // "c10d" (node 0's store) or "etcd"
  std::vector<std::string> endpoints;  // etcd's members
  std::string loss;                    // what losing a node means under it
  std::string access;                  // etcd: "TLS (CA ...), etcd user NAME" / "plain HTTP"
};

// How the program runs, for --dry-run (the launcher's program_command).
struct ProgramPlan {
  std::string interpreter;  // the Python a script runs under ("" when it runs as it is)
  std::string about;        // how it runs and why
};

// --framework jax (DESIGN §3): how `jax.distributed.initialize()` with no arguments finds the
// job: process 0's coordinator, and aml-launch's cluster environment on the PYTHONPATH.
struct JaxPlan {
  std::string why;               // "--framework jax", or the scheduler's JAX runtime
  std::string coordinator_host;  // node 0's address (each round's node 0 under etcd)
  int coordinator_port = 0;      // 0 until the rendezvous gives it (several nodes)
  std::string bind_host;         // where process 0 listens: node 0's job address
  std::string plugin_dir;        // first on the workers' PYTHONPATH
  std::string pythonpath;        // the launcher's own PYTHONPATH, kept after it
  int gpus = 0;                  // the GPUs this node's workers share (0: none)
};

// Who serves the workers' torch store at MASTER_ADDR:MASTER_PORT (DESIGN §3).
struct WorkerStorePlan {
  bool by_launcher = true;  // node 0's launcher (one node: this one); false: rank 0's worker
  std::string why;
  bool relay = false;  // --worker-store relay: the nodes but node 0 reach it through their relay
};

// Where notices of the job's end come from (issue 55), as --dry-run says it.
struct NoticePlan {
  std::vector<std::string> sources;  // azure, aws, gcp: the metadata services asked
  std::string why;                   // what chose them
  std::string metadata_url;          // "" where none is asked
  std::string signal;                // --notice-signal ("" none)
  std::string to_workers;            // --notice-to-workers ("" none)
};

struct LaunchPlan {
  Topology topology;
  std::vector<std::string> command;
  ProgramPlan program;
  double term_timeout_seconds = 0;      // a stop's grace between SIGTERM and SIGKILL
  std::vector<std::string> flag_notes;  // torchrun's flags that do something else here
  std::string run_id;
  // MASTER_PORT the workers' own process group uses; 0 until node 0 picks it at the
  // rendezvous of a multi-node job.
  int worker_master_port = 0;
  // Their MASTER_ADDR where it is not the job's: this node's relay to node 0's store
  // ("127.0.0.1", DESIGN §3); "" elsewhere.
  std::string worker_master_addr;
  WorkerStorePlan worker_store;
  std::optional<JaxPlan> jax;
  std::string socket_ifname;  // NCCL/GLOO_SOCKET_IFNAME set for the workers ("" when not set)
  std::string socket_ifname_reason;
  std::vector<WorkerPlan> workers;
  std::optional<ElasticPlan> elastic;
  std::optional<Placement> placement;
  MemoryPolicy memory_policy = MemoryPolicy::preferred;  // --mem-policy as asked
  std::optional<StoreAuthPlan> store_auth;               // where the launchers meet at a store
  std::optional<RendezvousPlan> rendezvous;
  NoticePlan notices;
};

// Facts gathered from the machine and the network before the plan is built, so that
// build_plan itself stays pure.
struct PlanInputs {
  std::vector<std::string> command;
  ProgramPlan program;
  double term_timeout_seconds = 0;
  std::vector<std::string> flag_notes;
  NoticePlan notices;
  bool virtual_local_rank = false;  // each worker sees its GPU alone, as device 0
  // CUDA_VISIBLE_DEVICES as the launcher has it, entry by entry (empty: unset or not a list).
  std::vector<std::string> visible_devices;
  bool nccl_async_set = false;   // TORCH_NCCL_ASYNC_ERROR_HANDLING already in the environment
  bool agent_store_set = false;  // TORCHELASTIC_USE_AGENT_STORE already (under torchrun)
  std::string run_id;            // from --run-id, else the scheduler's, else generated
  // The port used when the job names none: a free local one alone, 29500 where launchers meet.
  int free_port = 0;
  std::string route_ifname;  // the interface whose route reaches MASTER_ADDR
  std::string route_reason;  // how it was found, or why none was
  int cpu_count = 1;
  int restart_count = 0;
  bool omp_threads_set = false;        // OMP_NUM_THREADS already in the environment
  bool nccl_ifname_set = false;        // NCCL_SOCKET_IFNAME already in the environment
  bool gloo_ifname_set = false;        // GLOO_SOCKET_IFNAME already in the environment
  bool python_unbuffered_set = false;  // PYTHONUNBUFFERED already in the environment
  bool mkl_threads_set = false;        // MKL_NUM_THREADS already in the environment
  bool ucx_devices_set = false;        // UCX_NET_DEVICES already in the environment
  bool mpi_job = false;  // started by mpirun, or --preflight mpi, or UCX_* set: UCX is in use
  // --bind: where each local rank runs (nullopt: not computed, nothing bound).
  std::optional<Placement> placement;
  MemoryPolicy memory_policy = MemoryPolicy::preferred;
  // --framework tensorflow: one free port per local worker, for the TF_CONFIG of each.
  std::vector<int> tf_ports;
  // Multi-node, from the rendezvous: every worker of the job as host:port, by rank (the
  // TF_CONFIG cluster); empty on a single node, where tf_ports on MASTER_ADDR are used.
  std::vector<std::string> tf_workers;
  // Multi-node, from the rendezvous: node 0 picked the workers' own MASTER_PORT (0: none
  // picked, the job's master port is used).
  int worker_master_port = 0;
  std::string worker_master_addr;  // this node's relay, where the workers reach node 0's so
  WorkerStorePlan worker_store;
  std::optional<JaxPlan> jax;  // --framework jax
  std::string store_address;   // host:port of the job's store ("" when there is none)
  int local_store_port = 0;    // one node: that store is this launcher's, on loopback
  std::string store_token;
  std::optional<StoreAuthPlan> store_auth;
  std::optional<RendezvousPlan> rendezvous;
  // What the workers prove themselves to the store with: "none", "key" or "munge", and for a
  // key the workers' key (derived from the job's secret; it cannot prove a launcher).
  std::string worker_auth = "none";
  std::string worker_key_hex;
  // A per-process launch whose launchers meet as a group (DESIGN §5): as on several nodes,
  // the workers' MASTER_PORT comes from the rendezvous.
  bool per_process_group = false;
  std::optional<ElasticPlan> elastic;  // an elastic job (topology.elastic)
  int max_restarts = 0;                // TORCHELASTIC_MAX_RESTARTS
  // --hang-timeout: what the workers get for it (PYTHONFAULTHANDLER, the NCCL Flight
  // Recorder's variables), those the environment has not set already.
  EnvList hang_env;
};

LaunchPlan build_plan(const Topology& topology, const PlanInputs& inputs);

// The variables of DESIGN §3 for one worker.
EnvList worker_env(const LaunchPlan& plan, const PlanInputs& inputs, const WorkerPlan& worker);

std::string plan_json(const LaunchPlan& plan);
std::string plan_text(const LaunchPlan& plan);

}  // namespace aml
