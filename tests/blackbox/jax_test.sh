#!/usr/bin/env bash
# JAX under aml-launch (--framework jax, DESIGN §3): jax.distributed.initialize() with no
# arguments finds the job through aml-launch's cluster environment. Real JAX from PyPI (its CPU
# build, collectives over Gloo): one node of 2 processes; two network-namespace hosts of 2
# processes each, a psum across all four; the same under Kubeflow Trainer's JAX runtime's
# variables (no --framework: the runtime names JAX); a process that fails (an exception, or
# sys.exit(3)) stops the others and is named, and a sys.exit the job catches changes nothing. A torch job's workers see nothing of JAX. (Slurm, per node and per task:
# tests/cluster/slurm_test.sh.)
# usage: jax_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
JOB="$HERE/jax_job.py"
PY=$(command -v python3)  # PyPI's JAX is installed for it (scripts/install-deps.sh)
NAME="jax$$"
HOSTS=2
WORK=$(mktemp -d)
export TMPDIR="$WORK"  # hang stacks and the JAX plugin go with the test's files
cleanup() {
  kill_marked_processes "$NAME"
  "$CLUSTER" down "$NAME" "$HOSTS" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
check "JAX is installed for $PY" "$PY" -c "import jax" || { finish; exit; }

# --- A torch job (no --framework) sees nothing of JAX.
out=$("$BIN" --nproc-per-node 2 --dry-run -- true)
check "without --framework jax no worker gets a JAX_ variable or a PYTHONPATH" \
  bash -c '! grep -qE "^  (JAX_|PYTHONPATH=)" <<<"$1"' _ "$out"

json=$("$BIN" --framework jax --nnodes 2 --node-rank 1 --master-addr 10.0.0.4 --nproc-per-node 2 \
  --dry-run --format json -- true)
check "--dry-run, node 1 of 2: the coordinator on node 0 at a port the rendezvous picks; processes 2, 3 of 4" \
  /usr/bin/python3 -c '
import json, sys
plan = json.loads(sys.argv[1])
jax = plan["jax"]
assert jax["coordinator_host"] == "10.0.0.4" and jax["coordinator_port"] is None, jax
assert jax["reason"] == "--framework jax" and jax["cluster_environment"].endswith("/sitecustomize.py"), jax
for worker, rank in zip(plan["workers"], (2, 3)):
    env = worker["env"]
    assert env["JAX_NUM_PROCESSES"] == "4" and env["JAX_PROCESS_ID"] == str(rank), env
    assert env["PYTHONPATH"].split(":")[0] + "/sitecustomize.py" == jax["cluster_environment"], env
' "$json"

# --- One node.
reserve_port port || { finish; exit; }
out=$("$BIN" --framework jax --nproc-per-node 2 --master-port "$port" -- "$PY" "$JOB" 2>&1); status=$?
check "one node: processes 0 and 1 of 2 meet with initialize() alone, psum 3 ($status)" bash -c \
  '[ $0 = 0 ] && [ $(grep -c "jax process [01] of 2" <<<"$1") = 2 ] && [ $(grep -c "psum 3.0" <<<"$1") = 2 ]' \
  "$status" "$out" || echo "$out"

# --- A process that leaves by sys.exit(3) while the other waits for it in a collective: it
# ends at once with 3 (not after JAX's 300 s shutdown barrier), and the launcher stops the job.
# JAX's preemption service takes the SIGTERM of that stop as a preemption notice and goes on, so
# process 0 ends by SIGKILL after --term-timeout; with the service off, SIGTERM ends it
# (docs/guides/jax.md says so).
rank0_ended_by() { /usr/bin/python3 -c 'import json, sys
print([w["signal_name"] for w in json.load(open(sys.argv[1]))["workers"] if w["rank"] == 0][0])' "$1"; }
started=$SECONDS
out=$("$BIN" --framework jax --nproc-per-node 2 --master-port "$port" --term-timeout 5 \
  --summary-file "$WORK/exits.json" -- "$PY" "$JOB" exits 2>&1); status=$?
exits_seconds=$((SECONDS - started))
check "one node, process 1 calls sys.exit(3) while process 0 waits in a psum: exit 3 ($status)" \
  [ $status = 3 ] || echo "$out"
check "the verdict names rank 1 and its exit code 3" \
  grep -q "rank 1 (local rank 1) .*failed first at .*: exit code 3" <<<"$out" || echo "$out"
check "it ended at once, not after JAX's 300 s shutdown barrier (the job took ${exits_seconds} s)" \
  [ "$exits_seconds" -lt 60 ]
ended=$(rank0_ended_by "$WORK/exits.json")
check "JAX's preemption service kept process 0 past SIGTERM: it ended by $ended after --term-timeout" \
  [ "$ended" = SIGKILL ]
out=$(JAX_ENABLE_PREEMPTION_SERVICE=false "$BIN" --framework jax --nproc-per-node 2 --master-port "$port" \
  --term-timeout 5 --summary-file "$WORK/exits_off.json" -- "$PY" "$JOB" exits 2>&1); status=$?
ended=$(rank0_ended_by "$WORK/exits_off.json")
check "JAX_ENABLE_PREEMPTION_SERVICE=false: the same job exits 3 ($status), process 0 ended by $ended" \
  [ "$status/$ended" = 3/SIGTERM ] || echo "$out"

# --- A process stuck before a collective: the hang is found and the stacks are Python's.
out=$("$BIN" --framework jax --nproc-per-node 2 --master-port "$port" --hang-timeout 5 \
  --log-dir "$WORK/hang.logs" -- "$PY" "$JOB" hangs 2>&1); status=$?
check "one node, process 1 stuck, --hang-timeout 5: stopped as a hang, exit 124 ($status)" [ $status = 124 ]
check "the verdict finds rank 1 in load_batch and rank 0 in JAX's collective" bash -c \
  'grep -q "rank 1 is in load_batch (jax_job.py:[0-9]*)" <<<"$1" &&
   grep -q "rank 0 is in ExecuteReplicated.__call__ (pxla.py:[0-9]*)" <<<"$1"' _ "$out" ||
  grep aml-launch <<<"$out"
check "both ranks' logs hold their Python stacks" bash -c \
  "for r in 0 1; do grep -q -- '--- Python stacks' '$WORK/hang.logs/std_log_process_'\$r.txt || exit 1; done"

# --- Two hosts.
netns_up "$CLUSTER" "$NAME" $HOSTS || { finish; exit; }
MASTER=$("$CLUSTER" addr 0)
on() { local host=$1; shift; "$CLUSTER" exec "$NAME" "$host" env AML_TEST_MARK="$NAME" "$@"; }
# JAX's Gloo takes the host's name for its address (it reads no GLOO_SOCKET_IFNAME): each test
# host is named by its own address, as a cluster's node names resolve to theirs.
node() {  # node N OUT command...
  local n=$1 out=$2; shift 2
  on "$n" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$("$CLUSTER" addr "$n")" "$@" >"$out" 2>&1
}
launch() {  # launch CASE [flags...] -- command: both hosts, then their statuses in s0, s1
  local case=$1; shift
  node 0 "$WORK/$case.0" "$BIN" --nnodes 2 --node-rank 0 --master-addr "$MASTER" --master-port 29631 \
    --nproc-per-node 2 --rdzv-timeout 60 "$@" & local n0=$!
  node 1 "$WORK/$case.1" "$BIN" --nnodes 2 --node-rank 1 --master-addr "$MASTER" --master-port 29631 \
    --nproc-per-node 2 --rdzv-timeout 60 "$@" & local n1=$!
  wait "$n0"; s0=$?
  wait "$n1"; s1=$?
  cat "$WORK/$case.0" "$WORK/$case.1" >"$WORK/$case.both"
}
launch two --framework jax -- "$PY" "$JOB"
check "two hosts: both exit 0 ($s0, $s1)" bash -c "[ $s0 = 0 ] && [ $s1 = 0 ]"
check "two hosts: processes 0 to 3 of 4, each its launcher's rank" bash -c \
  "for r in 0 1 2 3; do grep -q \"jax process \$r of 4 rank \$r\$\" '$WORK/two.both' || exit 1; done"
check "two hosts: a psum of 10 on all four" bash -c "[ \$(grep -c 'psum 10.0' '$WORK/two.both') = 4 ]" ||
  cat "$WORK/two.both"
check "node 0 says where process 0's coordinator listens" \
  grep -q "jax: process 0's coordinator at $MASTER:[0-9]* (listening on $MASTER)" "$WORK/two.0"

# --- Kubeflow Trainer's JAX runtime: its pods' variables, no --framework.
kubeflow() {  # kubeflow N OUT: node N as a TrainJob pod of the JAX runtime
  node "$1" "$2" env JAX_NUM_PROCESSES=2 JAX_PROCESS_ID="$1" JAX_COORDINATOR_ADDRESS="$MASTER:29632" \
    "$BIN" --nproc-per-node 2 --rdzv-timeout 60 -- "$PY" "$JOB"
}
kubeflow 0 "$WORK/kf.0" & k0=$!
kubeflow 1 "$WORK/kf.1" & k1=$!
wait "$k0"; s0=$?
wait "$k1"; s1=$?
cat "$WORK/kf.0" "$WORK/kf.1" >"$WORK/kf.both"
check "Kubeflow Trainer's JAX runtime: 2 pods of 2 processes meet, a psum of 10 on all four ($s0, $s1)" \
  bash -c "[ $s0 = 0 ] && [ $s1 = 0 ] && [ \$(grep -c 'psum 10.0' '$WORK/kf.both') = 4 ]" ||
  cat "$WORK/kf.both"

# --- A process that fails stops the others, and is named.
started=$SECONDS
launch fails --framework jax --term-timeout 5 -- "$PY" "$JOB" fails
fails_seconds=$((SECONDS - started))
check "process 1 raises while the others wait for it in a psum: node 0 exits 1, node 1 stops ($s0, $s1)" \
  bash -c "[ $s0 = 1 ] && [ $s1 != 0 ]"
check "the verdict names rank 1 on node 0, its exit code and its exception" bash -c \
  "grep -q 'rank 1 (local rank 1) on node 0 .* failed first at .*: exit code 1' '$WORK/fails.both' &&
   grep -q 'RuntimeError: process 1 gives up' '$WORK/fails.both'" || cat "$WORK/fails.both"
check "it ended at once, not after JAX's 300 s shutdown barrier (the job took ${fails_seconds} s)" \
  [ "$fails_seconds" -lt 60 ]
finish
