#!/usr/bin/env bash
# A real NCCL allreduce through aml::comm: on 1 GPU, then on every GPU of this machine. Needs
# a GPU and its driver; without them it says so and exits 77, which ctest reports as skipped
# (never as passed).
# usage: nccl_gpu_test.sh AML_LAUNCH ALLREDUCE
set -u
BIN=$(realpath "$1")
ALLREDUCE=$(realpath "$2")
. "$(dirname "$0")/../blackbox/assert.sh"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "SKIPPED: no GPU here (nvidia-smi lists none); the NCCL allreduce needs one"
  exit 77
fi
for n in 1 $([ "$gpus" -gt 1 ] && echo "$gpus"); do
  out=$("$BIN" --nproc-per-node "$n" -- "$ALLREDUCE" --backend nccl --count 1048576 2>&1); status=$?
  echo "$out"
  check "nccl allreduce on $n GPU(s): exit 0 ($status)" [ $status = 0 ]
  check "nccl allreduce on $n GPU(s): the sum is right" \
    grep -q "allreduce of ranks 0..$((n - 1)) over nccl: sum = $((n * (n - 1) / 2)) " <<<"$out"
done
finish
