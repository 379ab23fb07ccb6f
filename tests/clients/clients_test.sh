#!/usr/bin/env bash
# Real training frameworks under aml-launch, as users run them (tests/clients/install_clients.sh
# makes their environments): PyTorch Lightning 2.2 and Hugging Face accelerate 0.30 on Debian's
# torch 1.13 (DDP over gloo), TensorFlow's MultiWorkerMirroredStrategy with --framework
# tensorflow. Each on one node x 2 workers, then on 2 test hosts (network namespaces,
# tests/cluster/netns_cluster.sh) x 2 workers with Kubeflow's variables. Every worker prints
# one CLIENT line; the check: every rank once, the world size right everywhere, exactly one
# main process (rank 0), the same weights on every rank after the steps, and the launch taken
# for what it is (Lightning: TorchElasticEnvironment, through TORCHELASTIC_RUN_ID, also where a
# Slurm step's variables are visible to the workers).
# usage: clients_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NAME="amc$$"
WORK=$(mktemp -d)
# What the launcher, torch (torchrun's torchelastic_* logs), JAX and TensorFlow write to
# TMPDIR goes with the test's files.
export TMPDIR="$WORK"
MARK="AML_TEST_MARK=$NAME"
cleanup() {
  for p in $(grep -l -s -a "$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | grep -v "^$$\$"); do
    kill -KILL "$p" 2>/dev/null
  done
  "$CLUSTER" down "$NAME" 2 >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

if ! pythons=$("$HERE/install_clients.sh" 2>"$WORK/install.err"); then
  tail -20 "$WORK/install.err"
  check "the client frameworks install (tests/clients/install_clients.sh)" false
  finish; exit
fi
TORCH_PY=$(sed -n 1p <<<"$pythons")
TF_PY=$(sed -n 2p <<<"$pythons")

# verify OUTPUT_FILES... : the CLIENT lines of one run against the rules above
verify() {
  local client=$1 world=$2 env=$3
  shift 3
  /usr/bin/python3 - "$client" "$world" "$env" "$@" <<'PY'
import re, sys
client, world, env = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [l for f in sys.argv[4:] for l in open(f, errors="replace") if f"CLIENT {client} " in l]
rows = [dict(re.findall(r"(\w+)=(\S+)", l.split("CLIENT", 1)[1])) for l in lines]
problems = []
if sorted(int(r["rank"]) for r in rows) != list(range(world)):
    problems.append(f"ranks {sorted(int(r['rank']) for r in rows)}, wanted 0..{world - 1}")
if any(int(r["world"]) != world for r in rows):
    problems.append(f"world sizes {[r['world'] for r in rows]}")
mains = [r["rank"] for r in rows if r["main"] == "1"]
if mains != ["0"]:
    problems.append(f"main process(es): ranks {mains}, wanted rank 0 alone")
if len({r["weights"] for r in rows}) != 1:
    problems.append(f"weights differ: {[r['weights'] for r in rows]}")
if any(r["env"] != env for r in rows):
    problems.append(f"taken for {sorted({r['env'] for r in rows})}, wanted {env}")
print("; ".join(problems) if problems else f"{len(rows)} ranks agree (weights {rows[0]['weights']})")
sys.exit(1 if problems else 0)
PY
}

# (client, interpreter, script, what the framework must take the launch for, launcher flags)
CLIENTS=(
  "lightning|$TORCH_PY|lightning_train.py|TorchElasticEnvironment|"
  "accelerate|$TORCH_PY|accelerate_train.py|DistributedType.MULTI_CPU|"
  "tensorflow|$TF_PY|tf_train.py|TFConfigClusterResolver|--framework tensorflow"
)

# --- one node x 2 workers
for entry in "${CLIENTS[@]}"; do
  IFS='|' read -r client py script env flags <<<"$entry"
  env "$MARK" "$BIN" --nproc-per-node 2 $flags -- "$py" "$HERE/$script" >"$WORK/$client.one" 2>&1
  status=$?
  result=$(verify "$client" 2 "$env" "$WORK/$client.one")
  ok=$?
  check "$client, 1 node x 2: exit $status; $result" bash -c "[ $status = 0 ] && [ $ok = 0 ]" ||
    tail -30 "$WORK/$client.one"
done

# --- srun aml-launch --nproc-per-node 2 (one Slurm task per node): the workers see SLURM_*, and
# Lightning must still take the launch for aml-launch's (TORCHELASTIC_RUN_ID), not for a Slurm
# one with one task per node (it fails then: "devices=2 ... --ntasks-per-node=1").
env "$MARK" SLURM_JOB_ID=42 SLURM_JOB_NAME=train SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_NTASKS=1 \
  SLURM_NNODES=1 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_STEP_NODELIST=localhost SLURM_JOB_NODELIST=localhost \
  SLURM_STEP_TASKS_PER_NODE=1 SLURM_NTASKS_PER_NODE=1 \
  "$BIN" --nproc-per-node 2 -- "$TORCH_PY" "$HERE/lightning_train.py" >"$WORK/lightning.slurm" 2>&1
status=$?
result=$(verify lightning 2 TorchElasticEnvironment "$WORK/lightning.slurm")
ok=$?
check "lightning under a Slurm step's variables, 1 node x 2: exit $status; $result" \
  bash -c "[ $status = 0 ] && [ $ok = 0 ]" || tail -30 "$WORK/lightning.slurm"

# --- 2 test hosts x 2 workers (Kubeflow's variables on each)
if ! "$CLUSTER" up "$NAME" 2 2>"$WORK/up.err"; then
  cat "$WORK/up.err"
  check "network namespaces can be made (ip netns, veth, bridge)" false
  finish; exit
fi
MASTER=$("$CLUSTER" addr 0)
port=29600
for entry in "${CLIENTS[@]}"; do
  IFS='|' read -r client py script env flags <<<"$entry"
  port=$((port + 1))
  pids=()
  for i in 0 1; do
    "$CLUSTER" exec "$NAME" "$i" env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" "$MARK" PET_NNODES=2 \
      PET_NODE_RANK="$i" PET_MASTER_ADDR="$MASTER" PET_MASTER_PORT="$port" \
      "$BIN" --nproc-per-node 2 --rdzv-timeout 120 $flags -- "$py" "$HERE/$script" \
      >"$WORK/$client.node$i" 2>&1 &
    pids+=($!)
  done
  wait "${pids[0]}"; s0=$?
  wait "${pids[1]}"; s1=$?
  result=$(verify "$client" 4 "$env" "$WORK/$client.node0" "$WORK/$client.node1")
  ok=$?
  check "$client, 2 hosts x 2: exits $s0 $s1; $result" bash -c "[ '$s0$s1' = 00 ] && [ $ok = 0 ]" ||
    tail -20 "$WORK/$client.node0" "$WORK/$client.node1"
done
finish
