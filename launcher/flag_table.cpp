#include "flag_table.hpp"

#include <array>

namespace aml {
namespace {

using enum FlagId;
using T = Torchrun;

// clang-format off
constexpr std::array<FlagSpec, kFlagCount> kFlags{{
  // The job's shape.
  {nnodes, "--nnodes", Takes::value, "N|MIN:MAX", "", false, "the scheduler's, else 1",
   "Number of nodes (overrides the scheduler's), or MIN:MAX for an elastic job: no node has a "
   "fixed rank, rounds start with MAX nodes (or MIN after --rdzv-last-call), nodes beyond MAX "
   "wait as hot spares, and a lost node is replaced by a spare in a new round",
   T::same, "", ""},
  {node_rank, "--node-rank --node_rank", Takes::value, "N", "", false, "the scheduler's, else 0",
   "This node's index, 0-based (overrides the scheduler's)", T::same, "", ""},
  {nproc_per_node, "--nproc-per-node --nproc_per_node", Takes::value, "N|auto|gpu|cpu",
   "", false, "auto",
   "Workers to start on this node: N; gpu, one per visible GPU (CUDA_VISIBLE_DEVICES, "
   "NVIDIA_VISIBLE_DEVICES, else /dev/nvidia*); cpu, one per CPU this launcher may use; auto, "
   "one per visible GPU, else 1 (torchrun's auto starts one per CPU there). Given as auto, gpu "
   "or N to a launcher that the scheduler started alone on its node (Azure ML's "
   "process_count_per_instance: 1, srun --ntasks-per-node=1), its scheduler's ranks count "
   "nodes and it starts that many workers",
   T::same, "", "auto gpu cpu 1 2 4 8"},
  {master_addr, "--master-addr --master_addr", Takes::value, "HOST", "", false,
   "the scheduler's (MASTER_ADDR ...)", "Address of node 0 (overrides the scheduler's)",
   T::same, "", ""},
  {master_port, "--master-port --master_port", Takes::value, "PORT", "", false,
   "the scheduler's, else a free port on one node",
   "The job's port on node 0: node 0's store on several nodes, the workers' MASTER_PORT on one",
   T::same, "", ""},
  {standalone, "--standalone", Takes::nothing, "", "", false, "",
   "One node, whatever the scheduler set: the workers meet on this host at a free port, under "
   "a run id of their own (torchrun's --standalone)",
   T::same, "", ""},

  // The command.
  {module, "--module -m", Takes::nothing, "", "", false, "",
   "The program is a Python module: PYTHON -u -m MODULE ARGS... (as python -m)",
   T::same, "", ""},
  {no_python, "--no-python --no_python", Takes::nothing, "", "", false, "",
   "Run the program as it is, even a .py file (no Python put in front of it)",
   T::same, "", ""},
  {run_path, "--run-path --run_path", Takes::nothing, "", "", false, "",
   "torchrun runs the script with runpy in its own interpreter; here the script runs under "
   "Python in a process of its own, as without this flag",
   T::differs,
   "--run-path: the script runs under Python in a process of its own, as without it "
   "(aml-launch has no interpreter to run it in)",
   ""},

  // The rendezvous of several nodes.
  {rdzv_backend, "--rdzv-backend --rdzv_backend", Takes::value, "c10d|static|etcd|etcd-v3",
   "PET_RDZV_BACKEND", false, "c10d",
   "Where the job's rendezvous is kept: c10d or static, node 0's store (node 0 lost, an "
   "elastic job's others wait --rdzv-timeout for it to come back); etcd or etcd-v3, an etcd "
   "cluster through its v3 API, so that any node may be lost, node 0 included (torchrun's "
   "etcd and etcd-v2 backends speak etcd's v2 API)",
   T::same, "", "c10d static etcd etcd-v3"},
  {rdzv_endpoint, "--rdzv-endpoint --rdzv_endpoint", Takes::value, "HOST[:PORT]",
   "PET_RDZV_ENDPOINT", false, "",
   "The rendezvous: node 0's store at HOST[:PORT] (default port 29400; the node at HOST is "
   "node 0; port 0 on this host: a free one), or under --rdzv-backend etcd etcd's members, "
   "HOST[:PORT],HOST[:PORT],... (default port 2379)",
   T::same, "", ""},
  {rdzv_id, "--rdzv-id --rdzv_id", Takes::value, "ID", "PET_RDZV_ID", false,
   "the scheduler's job id (Slurm's with its step, Azure ML's run id, ...)",
   "The job's id at the rendezvous, the same on every node and another job's a different one "
   "(torchrun's default, none, is every job's). Under --rdzv-backend etcd a job without one "
   "from the scheduler must give it",
   T::same, "", ""},
  {rdzv_conf, "--rdzv-conf --rdzv_conf", Takes::value, "KEY=VALUE,...", "PET_RDZV_CONF", false,
   "",
   "torchrun's rendezvous settings: join_timeout (as --rdzv-timeout), last_call_timeout (as "
   "--rdzv-last-call); under etcd protocol=https, cacert=, cert=, key= (TLS; OpenSSL's libssl "
   "is opened at run time), user=, password_file= (etcd's users; or the password in "
   "AML_LAUNCH_ETCD_PASSWORD, never on a command line), transport=grpc|gateway",
   T::same, "", ""},
  {rdzv_timeout, "--rdzv-timeout", Takes::value, "S", "", false, "600",
   "Several nodes: seconds to wait for every node to join", T::none, "", ""},
  {node_timeout, "--node-timeout", Takes::value, "S", "", false, "60",
   "Several nodes: seconds a node may be silent (a paused VM, a starved host) before the job "
   "counts it lost (Azure pauses VMs up to 30 s for host maintenance); a launcher that dies is "
   "noticed at once. Under etcd also each launcher's lease",
   T::none, "", ""},
  {rdzv_last_call, "--rdzv-last-call", Takes::value, "S", "", false, "3",
   "Elastic: once MIN nodes have joined, start the round when no other node came for this many "
   "seconds; a node that comes later waits as a spare for the next round",
   T::none, "", ""},
  {admit_newcomers, "--admit-newcomers", Takes::value, "next-round|at-once", "", false,
   "next-round",
   "Elastic: a node that arrives while a round runs below MAX nodes joins at the next round "
   "(next-round: a running round is never stopped to grow it) or ends the round at once to "
   "join (at-once, as torchrun)",
   T::none, "", "next-round at-once"},
  {run_id, "--run-id", Takes::value, "ID", "", false, "--rdzv-id, else the scheduler's job id",
   "The run id the workers get (TORCHELASTIC_RUN_ID, AML_LAUNCH_RUN_ID)", T::none, "", ""},
  {no_group, "--no-group", Takes::nothing, "", "", false, "",
   "Per-process launch (srun per task, mpirun per rank): each rank's launcher alone, without "
   "the others (no fail-fast across ranks; the workers keep the scheduler's MASTER_PORT)",
   T::none, "", ""},
  {worker_store, "--worker-store", Takes::value, "launcher|relay|torch", "AML_LAUNCH_WORKER_STORE",
   true, "launcher",
   "Who serves the workers' torch store at MASTER_ADDR:MASTER_PORT: launcher, node 0's "
   "launcher, in torch's own protocol on the launchers' own port (every worker of every node "
   "gets node 0's address and that one port), open to the job's hosts alone, outliving any "
   "worker and empty at each round (TORCHELASTIC_USE_AGENT_STORE=True); relay, the same, but "
   "every other node's workers reach it through their own launcher at 127.0.0.1 (one "
   "connection a node; also chosen by node 0 where its descriptors cannot hold every rank); "
   "torch, rank 0's worker hosts torch's own server at a port node 0 picks, open to anyone who "
   "reaches it (TORCHELASTIC_USE_AGENT_STORE=False)",
   T::none, "", "launcher relay torch"},
  {local_addr, "--local-addr --local_addr", Takes::value, "HOST", "", false, "",
   "torchrun's address of this node for the others; here the workers meet at node 0's "
   "address as the rendezvous names it",
   T::no_use,
   "--local-addr: not used: the workers meet at node 0's address as --master-addr or "
   "--rdzv-endpoint name it",
   ""},

  // Security.
  {rdzv_secret_file, "--rdzv-secret-file", Takes::value, "FILE", "AML_LAUNCH_SECRET_FILE",
   false, "",
   "Several nodes: a file with the job's secret (16 bytes or more), the same on every node: "
   "only launchers and workers that prove they know it get in (a mutual challenge-response; the "
   "secret never crosses the wire). Also the secret itself in AML_LAUNCH_SECRET; under Slurm "
   "munge needs nothing",
   T::none, "", "<file>"},
  {require_auth, "--require-auth", Takes::nothing, "", "AML_LAUNCH_REQUIRE_AUTH", false, "",
   "Several nodes: refuse to run without a job secret or munge", T::none, "", ""},

  // Supervision and output.
  {max_restarts, "--max-restarts --max_restarts", Takes::value, "N", "PET_MAX_RESTARTS", true,
   "0",
   "Restart the workers of every node together up to N times after a failure or a lost node",
   T::ours_differs,
   "--max-restarts: counted for the whole job, every node's workers restarted together",
   ""},
  {term_timeout, "--term-timeout --shutdown-timeout --shutdown_timeout", Takes::value, "S",
   "TORCH_ELASTIC_SHUTDOWN_TIMEOUT", true,
   "25: inside the 30 s that Kubernetes and Slurm give between SIGTERM and SIGKILL",
   "Seconds between SIGTERM and SIGKILL when the workers are stopped (torchrun's "
   "--shutdown-timeout)",
   T::same, "", ""},
  {log_dir, "--log-dir --log_dir", Takes::value, "DIR", "", false,
   "none; user_logs in Azure ML",
   "Every rank's output, whole, in DIR/std_log_process_<rank>.txt; {rank}, {local_rank}, "
   "{node_rank} in DIR are this launcher's (per node: rank = node rank)",
   T::ours_differs,
   "--log-dir: every rank's output goes whole into DIR/std_log_process_<rank>.txt and to the "
   "console (torchrun: DIR/<run id>_<suffix>/attempt_<n>/<local rank>/, with -r or -t)",
   "<dir>"},
  {tag, "--tag", Takes::value, "TEMPLATE|none", "", false, "\"[rank {rank}] \" with 2 or more workers",
   "Prefix of each console line: a template with {rank} and {local_rank}, or none",
   T::none, "", "none"},
  {log_line_prefix_template, "--log-line-prefix-template --log_line_prefix_template",
   Takes::value, "TEMPLATE", "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", true, "",
   "torchrun's prefix of each console line: ${rank}, ${local_rank}, ${role_name} and "
   "${hostname} in it are the worker's (--tag, where given, wins)",
   T::same, "", ""},
  {local_ranks_filter, "--local-ranks-filter --local_ranks_filter", Takes::value, "R,R,...", "",
   false, "every local rank",
   "Show only these local ranks on the console, e.g. 0 or 0,3 (log files get all)",
   T::same, "", ""},
  {redirects, "--redirects -r", Takes::value, "0-3|R:S,...", "", false, "",
   "torchrun's redirection into log files; here every rank's output goes to --log-dir's files "
   "and to the console, and --local-ranks-filter quiets the console",
   T::differs,
   "--redirects: every rank's output goes whole to its --log-dir file and to the console; "
   "--local-ranks-filter chooses the ranks the console shows",
   ""},
  {tee, "--tee -t", Takes::value, "0-3|R:S,...", "", false, "",
   "torchrun's copy into log files; here every rank's output goes to --log-dir's files and to "
   "the console anyway",
   T::differs,
   "--tee: with --log-dir every rank's output goes whole to its file and to the console "
   "already",
   ""},
  {duplicate_stdout_filters, "--duplicate-stdout-filters --duplicate_stdout_filters",
   Takes::value, "WORD,...", "", false, "",
   "torchrun's copy of matching stdout lines into a file of their own; here every rank's whole "
   "output is in its --log-dir file",
   T::no_use,
   "--duplicate-stdout-filters: not used: every rank's whole output is in its --log-dir file",
   ""},
  {duplicate_stderr_filters, "--duplicate-stderr-filters --duplicate_stderr_filters",
   Takes::value, "WORD,...", "", false, "",
   "torchrun's copy of matching stderr lines into a file of their own; here every rank's whole "
   "output is in its --log-dir file",
   T::no_use,
   "--duplicate-stderr-filters: not used: every rank's whole output is in its --log-dir file",
   ""},
  {summary_file, "--summary-file", Takes::value, "FILE", "", false, "",
   "The run's outcome as JSON: the first failure (rank, node, host, pid, code or signal, time, "
   "stderr's last lines), a stop, every worker's exit; also before each restart (\"final\": "
   "false). {rank}, {local_rank}, {node_rank} in FILE are this launcher's",
   T::none, "", "<file>"},
  {events_file, "--events-file", Takes::value, "FILE|none", "AML_LAUNCH_EVENTS_FILE", true,
   "none; DIR/events.jsonl under --log-dir DIR",
   "The job's events as JSON lines, each written as it happens: rendezvous, rounds, every "
   "worker's start and exit, the first failure, stops, restarts, benched nodes, the end "
   "(docs/guides/observability.md). {rank}, {local_rank}, {node_rank} in FILE are this "
   "launcher's",
   T::none, "", "<file>"},
  {job_events_file, "--job-events-file", Takes::value, "FILE|none", "AML_LAUNCH_JOB_EVENTS_FILE",
   true, "none",
   "On the job's node 0 (an elastic job's: each round's), the job's events as it sees every "
   "node: its own, each node joining or returning, failing, lost or benched, in one file for "
   "aml-launch report (docs/guides/observability.md). The other launchers write nothing. "
   "{rank}, {local_rank}, {node_rank} in FILE are this launcher's",
   T::none, "", "<file>"},
  {metrics_port, "--metrics-port", Takes::value, "PORT|ADDR:PORT", "AML_LAUNCH_METRICS_PORT",
   true, "none; the address: the one this node reaches node 0 from (127.0.0.1 on one node)",
   "Serve Prometheus metrics at http://ADDR:PORT/metrics while the launcher runs: the job's "
   "state, round, restarts, workers running and exited, nodes, rendezvous and recovery times, "
   "the workers' and the launcher's CPU and memory, goodput (docs/guides/observability.md). 0 "
   "picks a free port and says it; per-process launchers serve PORT + their local rank",
   T::none, "", ""},
  {exec, "--exec", Takes::nothing, "", "", false, "",
   "Per-process launch: aml-launch becomes the command (no supervision)", T::none, "", ""},
  {virtual_local_rank, "--virtual-local-rank --virtual_local_rank", Takes::nothing, "", "",
   false, "",
   "Every worker sees its own GPU alone, as device 0: LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES "
   "its GPU",
   T::same, "", ""},
  {role, "--role", Takes::value, "NAME", "", false, "default", "The workers' ROLE_NAME",
   T::same, "", ""},
  {framework, "--framework", Takes::value, "pytorch|tensorflow|jax", "", false, "pytorch",
   "tensorflow: also give each worker a TF_CONFIG naming every worker; jax: make "
   "jax.distributed.initialize() with no arguments find the job (JAX_* variables, and "
   "aml-launch's cluster environment first on PYTHONPATH); jax is the default under Kubeflow "
   "Trainer's JAX runtime",
   T::none, "", "pytorch tensorflow jax"},

  // Hangs.
  {hang_timeout, "--hang-timeout", Takes::value, "S|off", "AML_LAUNCH_HANG_TIMEOUT", true, "off",
   "Seconds without progress anywhere (no output, no aml_launch.progress()) after which the "
   "job is hung: every rank is looked at (py-spy, faulthandler, gdb, NCCL's flight recorder), "
   "the odd one out is named, and the job stops as a failure (exit 124); a rank that moves "
   "meanwhile calls it off",
   T::none, "", ""},
  {hang_startup_timeout, "--hang-startup-timeout", Takes::value, "S", "", false,
   "the larger of 1800 and 10 x --hang-timeout",
   "With --hang-timeout: how long a rank may be silent from its start until its first output "
   "or progress (imports, loading a checkpoint, the first meeting of the ranks)",
   T::none, "", ""},
  {straggler_check, "--straggler-check", Takes::value, "S|off", "AML_LAUNCH_STRAGGLER_CHECK", true,
   "off",
   "Every S seconds, read each rank's PyTorch flight recorder and measure its lateness at the "
   "collectives (its enqueue after the earliest rank's, one clock across nodes): a rank last by "
   "more than --straggler-share of the step in 3 of 5 samples is named a straggler; the "
   "lateness is the metric aml_launch_rank_lateness_seconds",
   T::none, "", ""},
  {straggler_share, "--straggler-share", Takes::value, "F", "", false, "0.2",
   "With --straggler-check: the share of the step (0 to 1) a rank must be last by", T::none, "",
   ""},
  {bench_stragglers, "--bench-stragglers", Takes::nothing, "", "", false, "",
   "With --straggler-check, elastic: a straggler's node is benched at the next round", T::none,
   "", ""},

  // Notices of a node's end.
  {notice_from, "--notice-from", Takes::value, "auto|none|azure,aws,gcp", "AML_LAUNCH_NOTICE_FROM",
   true, "auto",
   "Where notices of this node's end come from: the metadata service of Azure (Scheduled "
   "Events: Preempt, Terminate, Reboot, Redeploy, Freeze), AWS (spot instance-action) or GCP "
   "(preempted), asked every second (AML_LAUNCH_METADATA_URL names another service); auto, the "
   "platform the job runs on (Azure ML, SageMaker, Vertex AI), none elsewhere. A notice reaches "
   "every worker of every node at once (--notice-to-workers, AML_LAUNCH_NOTICE_FILE, "
   "aml_launch.notice()); "
   "workers that then exit 0 end the job as preempted (exit 200)",
   T::none, "", "auto none azure aws gcp"},
  {notice_signal, "--notice-signal", Takes::value, "SIGNAL", "", false, "",
   "A signal to this launcher that is a notice of the node's end, as Slurm's --signal=USR1@120 "
   "or a preStop hook sends it (USR1, USR2, ...): the workers get --notice-to-workers instead "
   "of the signal itself",
   T::none, "", "USR1 USR2 HUP"},
  {notice_to_workers, "--notice-to-workers", Takes::value, "SIGNAL|none", "", false, "USR1",
   "The signal every worker gets when a notice comes (none: only the file and "
   "aml_launch.notice())",
   T::none, "", "USR1 USR2 none"},

  // Placement.
  {bind, "--bind --numa-binding --numa_binding", Takes::value,
   "node|socket|exclusive|core-complex|none|auto", "AML_LAUNCH_BIND", true, "auto",
   "Where each local rank runs: the CPUs of its GPU's NUMA node (node), socket, a disjoint "
   "share of whole cores there (exclusive), one L3 group (core-complex), none; auto is node "
   "where the launcher has the whole node, a GPU per rank and 2 or more NUMA nodes, else none. "
   "Never outside the CPUs the launcher was given (torchrun's --numa-binding)",
   T::same, "", "node socket exclusive core-complex none auto"},
  {mem_policy, "--mem-policy", Takes::value, "preferred|bind|none", "", false, "preferred",
   "With --bind, the workers' memory: on their NUMA node first (preferred), only there (bind), "
   "or as it comes (none)",
   T::none, "", "preferred bind none"},

  // Preflight.
  {preflight, "--preflight", Takes::optional_value, "gloo|mpi|nccl", "", false, "gloo",
   "Before the command, every rank joins a communicator and checks allreduce from 8 B to "
   "64 MiB; a failure stops the job before the command starts",
   T::none, "", "gloo mpi nccl"},
  {preflight_min_busbw, "--preflight-min-busbw", Takes::value, "GBPS", "", false, "",
   "Fail the preflight when the 64 MiB allreduce's bus bandwidth is below GBPS", T::none, "",
   ""},

  // Node health and the bench.
  {health_checks, "--health-checks", Takes::value, "auto|none|gpu,nic,paths,command",
   "AML_LAUNCH_HEALTH_CHECKS", true, "auto",
   "What each node checks of itself at every round, while the rendezvous forms: gpu (NVML, "
   "opened at run time: every GPU the node should have answers, no recovery action, "
   "uncorrectable ECC error, row-remap failure, slowdown or new Xid), nic (every InfiniBand/RoCE "
   "port NCCL_IB_HCA names, else all: ACTIVE, LinkUp, link-downed and symbol-error counters "
   "steady), paths (--health-path), command (--health-command). auto: what this node has, "
   "nothing on a node without GPUs or HCAs. A node that fails is never seated (an elastic job "
   "goes on with a spare; a fixed-size one fails at once naming it) and is benched for the job",
   T::none, "", "auto none gpu nic paths command gpu,nic"},
  {health_path, "--health-path", Takes::value, "DIR", "", false, "",
   "A path each node checks at every round (repeatable): writable, with at least 1 GiB free",
   T::none, "", "<dir>"},
  {health_command, "--health-command", Takes::value, "CMD", "AML_LAUNCH_HEALTH_COMMAND", true, "",
   "Your own check, run by /bin/sh -c at every round (Slurm's HealthCheckProgram convention): "
   "exit 0 is healthy; its last lines of output are the reason it gives",
   T::none, "", ""},
  {health_timeout, "--health-timeout", Takes::value, "S", "", false, "10",
   "The bound of each health check: one that has not answered by then has failed", T::none, "",
   ""},
  {bench_after, "--bench-after", Takes::value, "N", "", false, "2",
   "An elastic job benches a node whose rank failed first in N rounds (as it benches a node "
   "that failed a check, or whose launcher was lost): never seated again while a spare or MIN "
   "allows",
   T::none, "", ""},
  {bad_nodes_file, "--bad-nodes-file", Takes::value, "FILE", "", false, "",
   "Append a JSON line for each node benched (host, addresses, node rank, reason, figure, "
   "time, job id), written by the launcher that decides, for the scheduler to exclude it",
   T::none, "", "<file>"},

  // The plan.
  {dry_run, "--dry-run", Takes::nothing, "", "", false, "",
   "Print the launch plan (the source and why, nodes, ranks, every worker's variables) and "
   "start nothing",
   T::none, "", ""},
  {format, "--format", Takes::value, "text|json", "", false, "text", "How --dry-run prints",
   T::none, "", "text json"},

  // torchrun's flags that have no use here.
  {monitor_interval, "--monitor-interval --monitor_interval", Takes::value, "S", "", false, "",
   "torchrun's polling of its workers; aml-launch hears each exit at once", T::no_use,
   "--monitor-interval: not used: aml-launch hears each worker's exit at once, without polling",
   ""},
  {start_method, "--start-method --start_method", Takes::value, "spawn|fork|forkserver", "",
   false, "", "torchrun's multiprocessing start method; aml-launch starts every worker as a "
   "process of its own", T::no_use,
   "--start-method: not used: every worker is a process of its own, started with posix_spawn",
   ""},
  {event_log_handler, "--event-log-handler --event_log_handler", Takes::value, "NAME", "", false,
   "", "torchrun's event log handler; here --events-file writes the job's events", T::no_use,
   "--event-log-handler: not used: --events-file writes the job's events as JSON lines, "
   "--summary-file its outcome",
   ""},
  {logs_specs, "--logs-specs --logs_specs", Takes::value, "NAME", "", false, "",
   "torchrun's log-file plugins; here --log-dir and --tag", T::no_use,
   "--logs-specs: not used: --log-dir and --tag say where output goes and how it is marked",
   ""},
  {signals_to_handle, "--signals-to-handle --signals_to_handle", Takes::value, "SIG,...", "",
   false, "", "torchrun's forwarded signals; aml-launch forwards TERM, INT, HUP, QUIT, USR1 and "
   "USR2 always", T::no_use,
   "--signals-to-handle: not used: TERM, INT, HUP, QUIT, USR1 and USR2 always reach every "
   "worker",
   ""},

  // The program itself.
  {help, "--help -h", Takes::nothing, "", "", false, "", "Print this help and exit", T::same,
   "", ""},
  {version, "--version", Takes::nothing, "", "", false, "",
   "Print the version, the target and the communicator backends, and exit", T::none, "", ""},
  {print_completion, "--print-completion", Takes::value, "bash|zsh|tcsh", "", false, "",
   "Print aml-launch's shell completion and exit: source <(aml-launch --print-completion "
   "bash), the same for zsh, or eval in tcsh",
   T::same, "", "bash zsh tcsh"},
}};
// clang-format on

constexpr bool in_id_order() {
  for (int i = 0; i < kFlagCount; ++i) {
    if (static_cast<int>(kFlags[i].id) != i) return false;
  }
  return true;
}
static_assert(in_id_order(), "kFlags is indexed by FlagId: keep the two in the same order");

}  // namespace

std::span<const FlagSpec> all_flags() { return kFlags; }

const FlagSpec& flag_spec(FlagId id) { return kFlags[static_cast<int>(id)]; }

}  // namespace aml
