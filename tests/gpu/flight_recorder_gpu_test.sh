#!/usr/bin/env bash
# torch's flight recorder on real GPUs (issue 74's item 4): an NCCL job whose rank 1 never calls
# its third all_reduce is named at the collective through NCCL's own pipe and dump, and a rank
# that computes longer at each step is named a straggler by --straggler-check. Needs two GPUs
# (NCCL refuses two ranks on one) and a Python whose torch has CUDA (AML_GPU_PYTHON, else
# python3); without them it says so and exits 77, which ctest reports as skipped.
# usage: flight_recorder_gpu_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
PY=${AML_GPU_PYTHON:-python3}
. "$(dirname "$0")/../blackbox/assert.sh"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${gpus:-0}" -lt 2 ]; then
  echo "SKIPPED: ${gpus:-0} GPU(s) here (nvidia-smi); an NCCL job of two ranks needs two"
  exit 77
fi
if ! "$PY" -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  echo "SKIPPED: $PY has no torch with CUDA (AML_GPU_PYTHON names another)"
  exit 77
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat >"$WORK/job.py" <<'JOB'
import os, sys, time
import torch, torch.distributed as dist
case, rank = sys.argv[1], int(os.environ["RANK"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
t = torch.ones(1 << 20, device="cuda")
for step in range(int(sys.argv[2])):
    if case == "hang" and rank == 1 and step == 2:
        time.sleep(600)  # never enqueues all_reduce #3; the others wait in it
    time.sleep(0.3 + (0.25 if case == "slow" and rank == 1 else 0))
    dist.all_reduce(t)
    torch.cuda.synchronize()
    print(f"rank {rank} step {step}", flush=True)
dist.destroy_process_group()
JOB

"$BIN" --nproc-per-node 2 --hang-timeout 10 --log-dir "$WORK/hang.logs" \
  -- "$PY" "$WORK/job.py" hang 10 >"$WORK/hang.out" 2>"$WORK/hang.err"
status=$?
check "NCCL, rank 1 skips all_reduce #3: a hang, exit 124 ($status)" [ "$status" = 124 ] || tail -5 "$WORK/hang.err"
check "NCCL's own pipe and dump: rank 1 named at the collective" \
  grep -q "flight recorder: rank 1 never entered all_reduce #[0-9]* of default_pg" "$WORK/hang.err" ||
  grep aml-launch "$WORK/hang.err"

"$BIN" --nproc-per-node 2 --straggler-check 2 --log-dir "$WORK/slow.logs" \
  -- "$PY" "$WORK/job.py" slow 60 >"$WORK/slow.out" 2>"$WORK/slow.err"
status=$?
check "NCCL, rank 1 slower at each step: the job ends 0 ($status)" [ "$status" = 0 ] || tail -5 "$WORK/slow.err"
check "NCCL, --straggler-check 2: rank 1 named a straggler" \
  grep -q "^aml-launch: rank 1 (node 0) is a straggler: " "$WORK/slow.err" || grep aml-launch "$WORK/slow.err"
finish
