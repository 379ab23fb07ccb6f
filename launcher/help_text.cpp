#include "help_text.hpp"

#include <string>
#include <string_view>

#include "flag_table.hpp"

namespace aml {

namespace {

const char* const kHelpFooter = R"(
Where the topology comes from (the first source present wins; flags override any field):
   1 torchrun     TORCHELASTIC_RUN_ID: RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE GROUP_RANK
                  GROUP_WORLD_SIZE MASTER_ADDR MASTER_PORT ROLE_NAME (not when it is the
                  AML_LAUNCH_RUN_ID of an aml-launch worker: aml-launch sets both)
   2 aml-launch   AML_LAUNCH_WORKER (a worker of aml-launch): the variables it set, below
   3 tf-config    TF_CONFIG with a task: rank = chief/master first, then workers;
                  ps and evaluator tasks are outside the training world
   4 openmpi      OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE; node = rank / local
                  size; master: MASTER_ADDR, AZ_BATCH_MASTER_NODE (host of addr:port),
                  AZ_BATCHAI_MPI_MASTER_NODE; port MASTER_PORT, else 6105
   5 mvapich      MV2_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
     mpich        PMI_RANK PMI_SIZE MPI_LOCALRANKID MPI_LOCALNRANKS (Hydra, Intel MPI)
   6 slurm        SLURM_PROCID inside a step (SLURM_STEP_ID): SLURM_NTASKS SLURM_LOCALID
                  SLURM_NODEID SLURM_STEP_TASKS_PER_NODE SLURM_NTASKS_PER_NODE; master: first
                  host of SLURM_STEP_NODELIST / SLURM_JOB_NODELIST; port 15000 + job id % 10000
                  for step 0, each later step 7919 on (mod 10000); run id JOB.STEP
   7 kubeflow     PET_NNODES PET_NODE_RANK PET_NPROC_PER_NODE PET_MASTER_ADDR PET_MASTER_PORT;
                  an elasticPolicy's PET_RDZV_BACKEND PET_RDZV_ENDPOINT PET_RDZV_ID
                  PET_RDZV_CONF PET_MAX_RESTARTS (the pod-level RANK and WORLD_SIZE are not read)
   8 torch-env    RANK WORLD_SIZE [LOCAL_RANK LOCAL_WORLD_SIZE NODE_RANK] MASTER_ADDR
                  MASTER_PORT (Azure ML PyTorch, any env:// launcher)
   9 torch-env    NODE_RANK MASTER_ADDR without RANK: one launcher per node; nodes = WORLD_SIZE
  10 sagemaker    SM_HOSTS SM_CURRENT_HOST SM_NUM_GPUS
  11 lsf          JSM_NAMESPACE_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE, LSB_DJOB_RANKFILE
  12 standalone   nothing above: one node, master 127.0.0.1, a free port
  Also read: CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES (--nproc-per-node auto, gpu),
  AZUREML_RUN_ID, SLURM_JOB_ID with SLURM_STEP_ID, LSB_JOBID, TRAINING_JOB_NAME (run id),
  HOSTNAME (a Kubeflow pod's job, the id of an etcd job without one), SLURM_NPROCS (Slurm's
  older SLURM_NTASKS), SLURM_CPU_BIND_TYPE (a task Slurm bound is left as it is),
  PATH and PYTHON_EXEC (the program, and the Python a script runs under), OMP_NUM_THREADS,
  MKL_NUM_THREADS, UCX_NET_DEVICES, NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, PYTHONUNBUFFERED
  (kept when set),
  AML_LAUNCH_SECRET (the job's secret itself), AML_LAUNCH_ETCD_PASSWORD (etcd's user's
  password), AML_MUNGE_SOCKET (munged's socket), AML_LAUNCH_MACHINE_ROOT (a copy of /sys for
  --bind), AML_LAUNCH_HEALTH_ROOT (a copy of /sys and /dev for the health checks, else that
  one), NCCL_IB_HCA (the ports the nic check looks at), AML_LAUNCH_NODE_NAME, SLURMD_NODENAME,
  NODE_NAME, AZ_BATCH_NODE_ID (the machine's name, first given: how the bench names a node),
  and where a library opened at run time is: AML_MUNGE_LIBRARY, AML_TLS_LIBRARY,
  AML_HTTP2_LIBRARY, AML_MPI_LIBRARY, AML_NCCL_LIBRARY, AML_CUDA_DRIVER_LIBRARY,
  AML_NVML_LIBRARY (the health checks' NVML).
  Notices (--notice-from auto): Azure where AZUREML_* or AZ_BATCH* is set, AWS where SM_*,
  TRAINING_JOB_NAME or AWS_BATCH_JOB_ID is, GCP where CLOUD_ML_JOB_ID or AIP_* is; the
  metadata service asked is AML_LAUNCH_METADATA_URL, else http://169.254.169.254; the notice
  file goes under TMPDIR, else /tmp.
  aml::comm (in a program that links it, and in aml-preflight) reads AML_COMM_BACKEND (gloo,
  mpi or nccl) and AML_COMM_TIMEOUT (seconds for the ranks to meet); aml-preflight also
  AML_PREFLIGHT_MAX_BYTES (the largest allreduce) and AML_PREFLIGHT_FAULT (a fault the suite
  injects); aml-launch, AML_LAUNCH_TEST_FAILPOINT (a fault the suite's tests inject at a
  named point) and AML_LAUNCH_TEST_CLOCK_SKEW_NS (a test node's clock set off by as much).

Launch: a node-level source spawns --nproc-per-node workers (auto: the visible GPUs, else 1).
A process-level source runs the command once as that rank, unless --nproc-per-node (N, auto,
gpu or cpu) is given and this process is alone on its node: then the scheduler's ranks are node
ranks and that many workers are spawned (Azure ML with process_count_per_instance=1).

Multi-node (a per-node launch on several nodes): node 0's launcher serves the rendezvous store
on MASTER_PORT; every node joins with the job's public id (--rdzv-id, else the run id) and,
with a job secret (--rdzv-secret-file, AML_LAUNCH_SECRET_FILE, AML_LAUNCH_SECRET) or munge
under Slurm, a mutual proof that it belongs to the job (the secret never crosses the wire;
without one anyone who reaches the store can join: said at the start; --require-auth), node 0
checks that all agree (nodes, workers per node, run id, version, --max-restarts) and picks the
workers' own MASTER_PORT; then all spawn. The first failure on any node stops every node. A
launcher that dies is noticed at once (its connection to the store closes); one that is only
silent (a paused VM, a starved host) is lost after --node-timeout (60 s) without a sign of life,
and a shorter pause is survived as if nothing happened. A node that does not
come within --rdzv-timeout is named in the error. Restarts are new rounds, on every node.
With --rdzv-backend etcd (--rdzv-endpoint HOST:2379,...; Kubeflow's rdzvBackend: etcd) the
rendezvous is kept in etcd instead: no node serves it, each launcher's lease (TTL
--node-timeout) is its liveness, and any node may be lost, node 0 included. With node 0's
store, an elastic job's survivors of node 0's loss wait --rdzv-timeout for it to come back.
Per-process launches (srun per task, mpirun per rank, Azure ML per-process) are the same
group, one member per rank: rank 0's launcher serves the store on MASTER_PORT, the first
failure stops every rank and all exit with its status (--no-group: each rank alone).

Hangs (--hang-timeout S): when no rank anywhere showed progress for S seconds (output, or
aml_launch.progress() / aml::progress() / aml_progress(), an atomic add without a system
call), every rank is looked at (/proc; Python stacks with py-spy, else faulthandler:
SIGABRT; native stacks with gdb; PyTorch's NCCL Flight Recorder dump), the ranks that are not
where the others wait are named, full stacks go to each rank's log, and the job stops as a
failure: exit 124. The look runs beside the supervision (signals, output and the other nodes
go on), and it is never wrong the other way: a rank that shows progress meanwhile, or whose
stack changed or that used CPU between two looks a moment apart, calls it off and the job
goes on. Start-up is not a hang: a rank's silence counts from its first progress, or after
--hang-startup-timeout. On several nodes any node that sees the whole job quiet declares it.

Every worker gets: RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE NODE_RANK GROUP_RANK
GROUP_WORLD_SIZE ROLE_RANK ROLE_WORLD_SIZE ROLE_NAME MASTER_ADDR MASTER_PORT AML_LAUNCH_WORKER
AML_LAUNCH_SOURCE AML_LAUNCH_RUN_ID AML_LAUNCH_RESTART_COUNT, as torchrun sets them
TORCHELASTIC_RUN_ID TORCHELASTIC_RESTART_COUNT TORCHELASTIC_MAX_RESTARTS
TORCHELASTIC_USE_AGENT_STORE (True: node 0's launcher serves torch's store at
MASTER_ADDR:MASTER_PORT, node 0's address and the launchers' own port on every node, and keeps
MASTER_PORT+1 to +16 free there; with a relay (--worker-store relay, or where node 0's
descriptors cannot hold every rank) MASTER_ADDR is 127.0.0.1 on the other nodes, where their
launcher carries the workers' calls to node 0's, and AML_LAUNCH_NODE0_ADDR is node 0's address;
False with --worker-store torch, where rank 0's worker hosts it) and
TORCH_NCCL_ASYNC_ERROR_HANDLING=1 when unset,
AML_LAUNCH_STORE, AML_LAUNCH_STORE_TOKEN, AML_LAUNCH_STORE_AUTH and AML_LAUNCH_STORE_KEY (node
0's store, or on one node this launcher's on loopback; a key for workers, never the job's secret),
OMP_NUM_THREADS when unset (CPUs / local workers; with --bind the cores a rank has, and
MKL_NUM_THREADS too), UCX_NET_DEVICES for an MPI job with --bind (the nearest RDMA device),
PYTHONUNBUFFERED=1 when unset, on a multi-node job NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME
(the interface whose route reaches MASTER_ADDR) when unset, with --hang-timeout
AML_LAUNCH_PROGRESS_FD (the page aml::progress() and aml_launch.progress() count into),
AML_LAUNCH_NOTICE_FILE where a notice can come (a platform asked, or --notice-signal: where a
notice of the job's end is written when one comes, on any node, as aml::notice() and
aml_launch.notice() read it; no file until then), with --hang-timeout or --straggler-check
PYTHONFAULTHANDLER=1 and PyTorch's flight recorder (TORCH_NCCL_DEBUG_INFO_PIPE_FILE, and
under the names the workers' torch reads, TORCH_FR_* from the torch that renamed each: the
buffer TORCH_FR_BUFFER_SIZE or TORCH_NCCL_TRACE_BUFFER_SIZE, the dump TORCH_FR_DUMP_TEMP_FILE
or TORCH_NCCL_DEBUG_INFO_TEMP_FILE, TORCH_FR_DUMP_ON_TIMEOUT or TORCH_NCCL_DUMP_ON_TIMEOUT)
when unset under either name, with --framework tensorflow a TF_CONFIG naming every worker, and with
--framework jax JAX_COORDINATOR_ADDRESS (process 0's coordinator, new at each round),
JAX_COORDINATOR_BIND_ADDRESS (node 0's job address, not every interface), JAX_NUM_PROCESSES,
JAX_PROCESS_ID, JAX_LOCAL_DEVICE_IDS (the worker's GPU, where there are GPUs) and PYTHONPATH
led by aml-launch's cluster environment for JAX (a sitecustomize, written under TMPDIR, else
/tmp, that runs the one it hides).

Supervision: every worker runs in its own process group, its argv executed directly. Its
stdout and stderr are relayed line by line (tagged when there are several local workers) and
written whole to --log-dir; with a log file, stdout goes straight into it and the console
follows the file, so a slow console never holds the workers up. When one worker fails, the
others get SIGCONT+SIGTERM, then SIGKILL after --term-timeout; aml-launch reports which rank
failed first and how, with the end of its stderr.

Stops: INT, TERM and HUP sent to aml-launch stop the job, and a stop is not a failure: every
worker gets the same signal (on every node) and --term-timeout to end on its own, then SIGKILL;
a second stop signal sends TERM at once, a third SIGKILL. QUIT, USR1 and USR2 are forwarded to
every worker's group. Orphaned descendants are reaped (aml-launch is a child subreaper, or
PID 1) and killed when the workers are done. The process started stays as a guardian of a
supervising child: SIGKILL of either one, or of the launcher's process group, and the other
kills every process the job started at once. Nothing is left behind.

Exit status: the first failed worker's exit code (on any node), 128+N when it died of signal
N (torchrun exits 1 for any failure); 128+N when signal N (INT 130, TERM 143, HUP 129)
stopped the job and no worker failed before or during the stop; 124 when --hang-timeout found
the job hung; 137 when the launcher's supervising half was killed (its guardian says so); 200
when a notice of the node's end came (preemption, maintenance, --notice-signal) and no worker
failed after it: preempted, which a scheduler can be told to retry; 0 when every worker exited
0; 1 when another node's launcher was lost; 2 for bad flags, a bad environment, a failed
rendezvous or a failed health check of a job without a spare (nothing was started); 127 when
the command cannot be run.
)";

const char* const kHelpHeader =
    R"(aml-launch: works out RANK, WORLD_SIZE, MASTER_ADDR ... from whatever the scheduler set, then
starts and supervises the workers of a distributed training job.

usage: aml-launch [OPTIONS] [--] PROGRAM [ARGS...]
       aml-launch [OPTIONS] SCRIPT.py [ARGS...]          as torchrun: the script runs under Python
       aml-launch [OPTIONS] -m MODULE [ARGS...]
       aml-launch --dry-run --format json [OPTIONS] [-- PROGRAM ...]
       aml-launch report [-o FILE.html] EVENTS.jsonl...   the job's events as one HTML page
                                                          (default FILE: job-report.html)

torchrun's command line works as it is: its flags in both spellings (--nproc_per_node and
--nproc-per-node), --flag VALUE and --flag=VALUE, the script after the flags without --.
A Python script (a .py file, or a file that cannot be run itself) runs under PYTHON_EXEC,
else python3, else python on PATH, with -u; --no-python runs it as it is, and so does a
program after --. Everything after the program is the program's.

Options:
)";

constexpr std::size_t kWidth = 100;
constexpr std::string_view kIndent = "      ";

// Words filled into lines of kWidth after kIndent.
void wrap(std::string& out, std::string_view text) {
  std::size_t column = 0;
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    if (column > 0 && column + 1 + word.size() > kWidth) {
      out += '\n';
      column = 0;
    }
    if (column == 0) {
      out += kIndent;
      column = kIndent.size();
    } else {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  out += '\n';
}

std::string spellings(const FlagSpec& spec) {
  std::string out;
  std::string_view names = spec.names;
  while (!names.empty()) {
    const std::size_t space = names.find(' ');
    if (!out.empty()) out += ", ";
    out += names.substr(0, space);
    if (space == std::string_view::npos) break;
    names.remove_prefix(space + 1);
  }
  if (spec.takes == Takes::value) out += " " + std::string(spec.shape);
  if (spec.takes == Takes::optional_value) out += "[=" + std::string(spec.shape) + "]";
  return out;
}

}  // namespace

std::string help_text() {
  std::string out = kHelpHeader;
  for (const FlagSpec& spec : all_flags()) {
    out += "  " + spellings(spec) + "\n";
    std::string text(spec.help);
    if (!text.empty() && text.back() != '.') text += '.';
    if (!spec.fallback.empty()) text += " Default: " + std::string(spec.fallback) + ".";
    if (!spec.variable.empty()) text += " Also " + std::string(spec.variable) + ".";
    if (spec.torchrun == Torchrun::no_use) text += " Accepted for torchrun's command lines.";
    wrap(out, text);
  }
  return out + kHelpFooter;
}

}  // namespace aml
