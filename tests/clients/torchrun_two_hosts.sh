#!/usr/bin/env bash
# aml-launch against the newest torchrun (PyPI's torch 2.15, tests/clients/install_clients.sh) on
# two network-namespace hosts (tests/cluster/netns_cluster.sh), 2 workers a node, the same
# static command line (--nnodes 2 --node-rank N --master-addr --master-port --rdzv-id): every
# worker's torch variables on both nodes equal torchrun's, MASTER_ADDR and MASTER_PORT among
# them (node 0's address and the named port on every node). OMP_NUM_THREADS differs on purpose
# (docs/guides/from-torchrun.md). Then a torch job of that torch (gloo) runs under aml-launch
# on both hosts, rank 0 with a store of its own at MASTER_PORT+1, as Megatron-LM has one.
# usage: torchrun_two_hosts.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NAME="amt$$"
WORK=$(mktemp -d)
# What the launcher, torch (torchrun's torchelastic_* logs), JAX and TensorFlow write to
# TMPDIR goes with the test's files.
export TMPDIR="$WORK"
cleanup() {
  kill_marked_processes "$NAME"
  "$CLUSTER" down "$NAME" 2 >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

if ! pythons=$("$HERE/install_clients.sh" 2>"$WORK/install.err"); then
  tail -20 "$WORK/install.err"
  check "the client frameworks install (tests/clients/install_clients.sh)" false
  finish; exit
fi
PY=$(sed -n 3p <<<"$pythons")
netns_up "$CLUSTER" "$NAME" 2 || { finish; exit; }
MASTER=$("$CLUSTER" addr 0)
on() { local host=$1; shift; "$CLUSTER" exec "$NAME" "$host" env AML_TEST_MARK="$NAME" "$@"; }
cat >"$WORK/dump.py" <<'PY'
import json, os, sys
names = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
         "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "MASTER_PORT",
         "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT",
         "TORCHELASTIC_MAX_RESTARTS"]
with open(f"{sys.argv[1]}.{os.environ['RANK']}.json", "w") as f:
    json.dump({n: os.environ.get(n) for n in names}, f)
PY

run_both() {  # run_both WHO LAUNCHER...: the two hosts' launchers at once; their statuses
  local who=$1; shift
  for n in 0 1; do
    on "$n" "$@" --nnodes 2 --node-rank "$n" --master-addr "$MASTER" --master-port 29631 \
      --rdzv-id job7 --nproc-per-node 2 "$WORK/dump.py" "$WORK/$who" >"$WORK/$who.out.$n" 2>&1 &
    pids[n]=$!
  done
  wait "${pids[0]}"; s0=$?
  wait "${pids[1]}"; s1=$?
  echo "$s0 $s1"
}
statuses=$(run_both torchrun "$PY" -m torch.distributed.run)
check "torchrun (torch 2.15) runs on both hosts ($statuses)" [ "$statuses" = "0 0" ] ||
  cat "$WORK"/torchrun.out.*
statuses=$(run_both aml env PYTHON_EXEC="$PY" "$BIN")
check "aml-launch runs the same command line on both hosts ($statuses)" [ "$statuses" = "0 0" ] ||
  cat "$WORK"/aml.out.*
said=$("$PY" - "$WORK" <<'PY'
import json, sys
wrong = []
for rank in range(4):
    try:
        t = json.load(open(f"{sys.argv[1]}/torchrun.{rank}.json"))
        a = json.load(open(f"{sys.argv[1]}/aml.{rank}.json"))
    except OSError as e:
        wrong.append(f"rank {rank}: {e}")
        continue
    wrong += [f"rank {rank} {k}={a[k]!r} (torchrun {v!r})" for k, v in t.items() if a.get(k) != v]
print("; ".join(wrong[:6]) or "same")
PY
)
check "every worker's torch variables on both nodes are torchrun's ($said)" [ "$said" = same ]
check "torchrun gave every worker node 0's address and the named port" \
  bash -c "grep -l '\"MASTER_ADDR\": \"$MASTER\", \"MASTER_PORT\": \"29631\"' '$WORK'/torchrun.?.json | wc -l | grep -qx 4"

# The newest torch's own job under aml-launch: gloo over env://, rank 0's store at MASTER_PORT+1.
for n in 0 1; do
  on "$n" env PYTHON_EXEC="$PY" PLUS_K=1 "$BIN" --nnodes 2 --node-rank "$n" --master-addr "$MASTER" \
    --master-port 29633 --nproc-per-node 2 "$HERE/../blackbox/worker_store_job.py" \
    >"$WORK/job.out.$n" 2>&1 &
  pids[n]=$!
done
wait "${pids[0]}"; s0=$?
wait "${pids[1]}"; s1=$?
both=$(cat "$WORK"/job.out.*)
check "torch 2.15's gloo job runs on both hosts under aml-launch ($s0 $s1)" bash -c "[ $s0 = 0 ] && [ $s1 = 0 ]" ||
  echo "$both" | tail -30
check "torch 2.15: all 4 ranks reach rank 0's own store at MASTER_PORT+1" \
  bash -c "[ \$(grep -c 'reached rank 0.s own store at MASTER_PORT+1' <<<\"\$0\") = 4 ]" "$both"
finish
