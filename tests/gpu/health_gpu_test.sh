#!/usr/bin/env bash
# The GPU health check against the real driver's NVML: --dry-run answers for every GPU of this
# machine, in how long; a job runs after the checks. Needs a GPU and its driver; without them it
# says so and exits 77, which ctest reports as skipped (never as passed).
# usage: health_gpu_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/../blackbox/assert.sh"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "SKIPPED: no GPU here (nvidia-smi lists none); the GPU health check needs the driver's NVML"
  exit 77
fi
out=$("$BIN" --dry-run --format json --health-checks gpu -- true 2>&1); status=$?
check "dry-run with the gpu check: exit 0 ($status)" [ $status = 0 ]
AML_OUT="$out" /usr/bin/python3 - "$gpus" <<'PY'
import json, os, sys
gpu = json.loads(os.environ["AML_OUT"])["health"]["checks"][0]
print(f"gpu check: ok {gpu['ok']}, {gpu['figure']}, {gpu['seconds'] * 1000:.1f} ms")
sys.exit(0 if gpu["check"] == "gpu" and gpu["figure"].startswith(f"{sys.argv[1]} GPU") else 1)
PY
check "the real NVML answers for every GPU nvidia-smi lists ($gpus)" [ $? = 0 ]
text=$("$BIN" --dry-run --health-checks gpu -- true 2>&1 | tail -2)
echo "$text"
job=$("$BIN" --health-checks gpu --health-command 'nvidia-smi -L >/dev/null' --nproc-per-node 1 -- \
  sh -c 'echo ran after the checks' 2>&1); status=$?
check "a job runs after the checks ($status)" bash -c "[ $status = 0 ] && grep -q 'ran after the checks' <<<'$job'"
finish
