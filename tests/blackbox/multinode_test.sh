#!/usr/bin/env bash
# Multi-node jobs on a cluster of network namespaces (tests/cluster/netns_cluster.sh): 3 nodes
# x 2 workers of examples/torch_allreduce.py (Debian's python3-torch, gloo, env://) under the
# environments that Azure ML (PyTorch and MPI), Kubeflow and Slurm set on each node; then the
# ways a multi-node job goes wrong: a worker failing on node 2, node 1's launcher SIGKILLed,
# node 2 never started, a wrong token, and garbage or stalled clients during the rendezvous.
# Also aml::comm's Gloo across the 3 nodes, bootstrapped through the launchers' store.
# usage: multinode_test.sh AML_LAUNCH EXAMPLE ALLREDUCE
set -u
BIN=$(realpath "$1")
EXAMPLE=$(realpath "$2")
ALLREDUCE=$(realpath "$3")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NAME="aml$$"
NODES=3
py=/usr/bin/python3
# Under AZUREML_RUN_ID the per-rank logs go to ./user_logs: keep them out of the caller's directory.
WORK=$(mktemp -d)
# What the launcher, torch (torchrun's torchelastic_* logs), JAX and TensorFlow write to
# TMPDIR goes with the test's files.
export TMPDIR="$WORK"
MARK="AML_TEST_MARK=$NAME"
cleanup() {
  kill_marked
  "$CLUSTER" down "$NAME" "$NODES" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

marked_pids() {  # every process that carries this test's marker in its environment
  grep -l -s -a "$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | grep -v "^$$\$" || true
}
kill_marked() { for p in $(marked_pids); do kill -KILL "$p" 2>/dev/null; done; }
launcher_pid() {  # launcher_pid NODE: the aml-launch process of that node
  for p in $(marked_pids); do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$BIN" ] || continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "AML_TEST_NODE=$1" && echo "$p"
  done
}

if ! "$CLUSTER" up "$NAME" "$NODES" 2>"$WORK/up.err"; then
  cat "$WORK/up.err"
  check "network namespaces can be made (ip netns, veth, bridge)" false
  finish; exit
fi
MASTER=$("$CLUSTER" addr 0)

# The environment each scheduler gives node I of 3 (one launcher per node).
azure_pytorch() { echo MASTER_ADDR="$MASTER" MASTER_PORT=29511 WORLD_SIZE=3 NODE_RANK="$1" RANK="$1" LOCAL_RANK=0 AZUREML_RUN_ID="run-$NAME"; }
azure_mpi() { echo OMPI_COMM_WORLD_RANK="$1" OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=1 AZ_BATCH_MASTER_NODE="$MASTER:6000" AZUREML_RUN_ID="run-$NAME"; }
kubeflow() { echo PET_NNODES=3 PET_NODE_RANK="$1" PET_NPROC_PER_NODE=2 PET_MASTER_ADDR="$MASTER" PET_MASTER_PORT=23456 MASTER_ADDR="$MASTER" MASTER_PORT=23456 RANK="$1" WORLD_SIZE=3; }
slurm() { echo SLURM_JOB_ID=4242 SLURM_STEP_ID=0 SLURM_PROCID="$1" SLURM_NTASKS=3 SLURM_NNODES=3 SLURM_LOCALID=0 SLURM_NODEID="$1" SLURM_STEP_NODELIST="${NAME}n[0-2]" SLURM_JOB_NODELIST="${NAME}n[0-2]" SLURM_STEP_TASKS_PER_NODE="1(x3)"; }

# start_node I SCHEDULER ARGS...: node I's launcher in the background; its output, exit status
# and end time land in $WORK/{out,status,end}.I
start_node() {
  local i=$1 scheduler=$2
  shift 2
  rm -f "$WORK/status.$i" "$WORK/end.$i"
  (
    "$CLUSTER" exec "$NAME" "$i" env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" "$MARK" AML_TEST_NODE="$i" \
      $($scheduler "$i") "$BIN" "$@" >"$WORK/out.$i" 2>&1
    write_status "$WORK/status.$i" $?
    date +%s.%N >"$WORK/end.$i"
  ) &
  NODE_PIDS+=($!)
}
NODE_PIDS=()
wait_nodes() {  # every launcher started so far
  wait "${NODE_PIDS[@]}"
  NODE_PIDS=()
}
statuses() { for i in "$@"; do cat "$WORK/status.$i" 2>/dev/null || echo none; done | tr '\n' ' '; }
show() { for i in "$@"; do echo "--- node $i"; cat "$WORK/out.$i"; done; }
# run_nodes "0 1 2" SCHEDULER ARGS...: these nodes' launchers, to the end; $s: their statuses
run_nodes() {
  local nodes=$1 scheduler=$2
  shift 2
  for i in $nodes; do start_node "$i" "$scheduler" "$@"; done
  wait_nodes
  s=$(statuses $nodes)
}
expect_statuses() {  # expect_statuses "0 0 0 " NAME: check $s, show the outputs when it differs
  check "$2 ($s)" [ "$s" = "$1" ] || show 0 1 2
}
seconds_after() {  # seconds_after T NODE...: when the last of these launchers ended, after T
  local last=0
  for i in "${@:2}"; do last=$($py -c 'import sys; print(max(float(sys.argv[1]), float(sys.argv[2])))' "$last" "$(cat "$WORK/end.$i")"); done
  $py -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f}")' "$1" "$last"
}
wait_for_text() {  # wait_for_text FILE TEXT SECONDS
  for _ in $(seq $(($3 * 20))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}

# --- 3 nodes x 2 workers of torch gloo all_reduce, under each scheduler's environment.
if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
  for scheduler in azure_pytorch azure_mpi kubeflow slurm; do
    run_nodes "0 1 2" "$scheduler" --nproc-per-node 2 -- "$py" "$EXAMPLE"
    expect_statuses "0 0 0 " "$scheduler: 3 nodes x 2 workers, every launcher exits 0"
    check "$scheduler: the all_reduce over 6 ranks is right, printed once, by rank 0 on node 0" bash -c \
      "grep -q 'all_reduce of ranks 0..5 = 15 (expected 15): ok' '$WORK/out.0' && [ \$(cat '$WORK'/out.* | grep -c all_reduce) = 1 ]"
  done
else
  check "python3-torch is installed (scripts/install-deps.sh installs it)" false
fi

# --- aml::comm Gloo over 3 nodes x 2, meeting through node 0's launcher store.
run_nodes "0 1 2" azure_pytorch --nproc-per-node 2 -- "$ALLREDUCE" --backend gloo --count 65536
expect_statuses "0 0 0 " "aml::comm gloo, 3 nodes x 2: every launcher exits 0"
check "aml::comm gloo, 3 nodes x 2: the sum over 6 ranks is right, printed once by rank 0" bash -c \
  "grep -q 'allreduce of ranks 0..5 over gloo: sum = 15 (expected 15): ok' '$WORK/out.0' && [ \$(cat '$WORK'/out.* | grep -c 'allreduce of ranks') = 1 ]"

# --- --preflight on 3 nodes: the nodes meet for the preflight, then again for the command.
run_nodes "0 1 2" azure_pytorch --nproc-per-node 2 --preflight -- sh -c 'echo "command ran as $RANK"'
expect_statuses "0 0 0 " "preflight on 3 nodes x 2: every launcher exits 0"
check "preflight on 3 nodes x 2: passed over 6 ranks, then the command ran on all 6" bash -c \
  "grep -q 'allreduce over 6 ranks (gloo)' '$WORK/out.0' && grep -q 'aml-preflight: passed' '$WORK/out.0' &&
   [ \$(cat '$WORK'/out.* | grep -c 'command ran as') = 6 ]"

# --- A worker on node 2 (rank 5) fails: every node stops within a second and names it.
FAILING='if [ "$RANK" = 5 ]; then sleep 1; echo "rank 5 gives up" >&2; date +%s.%N > "$0/failed_at"; exit 7; fi; exec sleep 60'
run_nodes "0 1 2" azure_pytorch --nproc-per-node 2 -- sh -c "$FAILING" "$WORK"
expect_statuses "7 7 7 " "worker failure on node 2: every launcher exits 7"
check "worker failure on node 2: every node names rank 5 on node 2 and its stderr" bash -c \
  "for i in 0 1 2; do grep -q 'rank 5 (local rank 1) on node 2' '$WORK'/out.\$i && grep -q 'rank 5 gives up' '$WORK'/out.\$i || exit 1; done"
took=$(seconds_after "$(cat "$WORK/failed_at")" 0 1 2)
check "worker failure on node 2: every launcher gone ${took} s after the failure (< 1 s)" \
  $py -c 'import sys; sys.exit(float(sys.argv[1]) >= 1.0)' "$took"
left=$(marked_pids | wc -l)
check "worker failure on node 2: no process of the job left ($left)" [ "$left" = 0 ]

# --- --max-restarts: rank 5 fails in round 0 only; every node restarts in round 1 and succeeds.
ONCE='if [ "$RANK" = 5 ] && [ "$AML_LAUNCH_RESTART_COUNT" = 0 ]; then exit 3; fi; echo "round $AML_LAUNCH_RESTART_COUNT rank $RANK ok"'
run_nodes "0 1 2" azure_pytorch --nproc-per-node 2 --max-restarts 1 -- sh -c "$ONCE"
expect_statuses "0 0 0 " "restarts: every node restarted together and then exited 0"
check "restarts: every node joined run round 1, and all 6 ranks ran in it" bash -c \
  "for i in 0 1 2; do grep -q 'joined run round 1' '$WORK'/out.\$i || exit 1; done; [ \$(cat '$WORK'/out.* | grep -c 'round 1 rank [0-5] ok') = 6 ]"

# --- --framework tensorflow: every worker's TF_CONFIG lists all 6 workers at their nodes' addresses.
run_nodes "0 1 2" azure_pytorch --nproc-per-node 2 --framework tensorflow -- \
  sh -c 'echo "$TF_CONFIG" > "$0/tf.$RANK"' "$WORK"
check "TF_CONFIG on 3 nodes: 6 workers at 10.77.0.1-3, each its own index ($(statuses 0 1 2))" $py -c '
import json, sys
cfgs = [json.load(open(f"{sys.argv[1]}/tf.{r}")) for r in range(6)]
workers = cfgs[0]["cluster"]["worker"]
assert len(workers) == 6 and len(set(workers)) == 6, workers
assert [w.split(":")[0] for w in workers] == ["10.77.0.1"] * 2 + ["10.77.0.2"] * 2 + ["10.77.0.3"] * 2, workers
for r, c in enumerate(cfgs):
    assert c["cluster"]["worker"] == workers and c["task"] == {"type": "worker", "index": r}, c' "$WORK"

# --- Node 1's launcher is SIGKILLed: the others notice within 2 s and stop.
for i in 0 1 2; do start_node "$i" azure_pytorch --nproc-per-node 2 -- sleep 60; done
for i in 0 1 2; do wait_for_text "$WORK/out.$i" "joined run round 0" 10; done
# Both of its processes, the supervisor first: killed the other way round, the supervisor
# could hear of its guardian's death in between and report a stop by SIGKILL instead.
victim=$(launcher_pid 1 | sort -rn)
killed_at=$(date +%s.%N)
kill -KILL $victim
wait_nodes
s=$(statuses 0 2)
expect_statuses "1 1 " "node 1's launcher SIGKILLed (pid $victim): nodes 0 and 2 exit 1"
check "node 1's launcher SIGKILLed: both name node 1 as lost" bash -c \
  "grep -q 'node 1 (.*its launcher was lost' '$WORK/out.0' && grep -q 'node 1 (.*its launcher was lost' '$WORK/out.2'"
took=$(seconds_after "$killed_at" 0 2)
check "node 1's launcher SIGKILLed: nodes 0 and 2 gone ${took} s after (< 2 s)" \
  $py -c 'import sys; sys.exit(float(sys.argv[1]) >= 2.0)' "$took"
for _ in $(seq 40); do [ -z "$(marked_pids)" ] && break; sleep 0.05; done
left=$(marked_pids | wc -l)
check "node 1's launcher SIGKILLed: no process of the job left, its own workers included ($left)" [ "$left" = 0 ]
kill_marked

# --- Node 2 never starts: nodes 0 and 1 give up after --rdzv-timeout, naming node rank 2.
run_nodes "0 1" azure_pytorch --nproc-per-node 2 --rdzv-timeout 2 -- true
expect_statuses "2 2 " "node 2 never starts: nodes 0 and 1 exit 2"
check "node 2 never starts: both name node rank 2 as missing" bash -c \
  "grep -q 'node rank(s) 2 of 3 did not' '$WORK/out.0' && grep -q 'node rank(s) 2 of 3 did not' '$WORK/out.1'"

# --- A wrong token, garbage, a huge frame and a stalled client during a rendezvous: refused
# or dropped, and the job still runs.
start_node 0 azure_pytorch --nproc-per-node 2 -- true
start_node 1 azure_pytorch --nproc-per-node 2 -- true
sleep 0.3
exec 7> >("$CLUSTER" exec "$NAME" 2 "$py" "$HERE/bad_store_clients.py" "$MASTER" 29511 >"$WORK/bad.out" 2>&1; write_status "$WORK/bad.status" $?)
wait_for_text "$WORK/bad.out" "stalled" 10
start_node 2 azure_pytorch --nproc-per-node 2 -- true
wait_nodes
exec 7>&-
for _ in $(seq 100); do [ -f "$WORK/bad.status" ] && break; sleep 0.05; done
s=$(statuses 0 1 2)
cat "$WORK/bad.out"
expect_statuses "0 0 0 " "bad clients during the rendezvous: the job still runs, every launcher exits 0"
check "bad clients: the wrong token was refused" bash -c \
  "[ \"\$(cat '$WORK/bad.status')\" = 0 ] && grep -q 'wrong token: \(error\|closed\)' '$WORK/bad.out'"
check "bad clients: garbage and the huge frame were dropped" bash -c \
  "grep -q 'garbage: \(error\|closed\)' '$WORK/bad.out' && grep -q 'huge length: \(error\|closed\)' '$WORK/bad.out'"

# --- Nodes that disagree (node 2 asks for 4 workers): every launcher says so and starts nothing.
start_node 2 azure_pytorch --nproc-per-node 4 --rdzv-timeout 10 -- true
run_nodes "0 1" azure_pytorch --nproc-per-node 2 --rdzv-timeout 10 -- true
s=$(statuses 0 1 2)
expect_statuses "2 2 2 " "nodes that disagree: every launcher exits 2"
check "nodes that disagree: the error names node 2 and the processes per node" bash -c \
  "for i in 0 1 2; do grep -q 'disagree on processes per node: .*node 2 (.*has 4' '$WORK'/out.\$i || exit 1; done" ||
  show 0 1 2
finish
