#!/usr/bin/env bash
# --bind on a real GPU machine: the placement's GPU of each local rank is the one CUDA numbers
# so (nvidia-smi's bus id), a bound worker runs on the CPUs --dry-run named, and host-to-device
# copies bound against unbound (5 runs each, alternating; medians printed for RESULTS.md).
# Without a GPU it says so and exits 77, which ctest reports as skipped (never as passed).
# usage: placement_gpu_test.sh AML_LAUNCH H2D_COPY
set -u
BIN=$(realpath "$1")
COPY=$(realpath "$2")
. "$(dirname "$0")/../blackbox/assert.sh"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "SKIPPED: no GPU here (nvidia-smi lists none); placement on a real GPU node needs one"
  exit 77
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$BIN" --nproc-per-node "$gpus" --bind node --dry-run --format json -- true >"$W/plan.json"
nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader >"$W/smi"
check "each local rank's GPU is the one nvidia-smi numbers so" /usr/bin/python3 - "$W/plan.json" "$W/smi" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
smi = {int(i): bus.strip().lower()[-12:] for i, bus in (l.split(",") for l in open(sys.argv[2]))}
for w in plan["workers"]:
    assert w["placement"]["gpu"].lower() == smi[w["local_rank"]], (w["placement"], smi)
PY
cpus=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["workers"][0]["placement"]["cpus"])' "$W/plan.json")
"$BIN" --nproc-per-node 1 --bind node -- sh -c 'grep Cpus_allowed_list /proc/self/status' >"$W/cpus"
check "a bound worker runs on the CPUs --dry-run named ($cpus)" grep -q "Cpus_allowed_list:.$cpus\$" "$W/cpus" ||
  cat "$W/cpus"
for i in 1 2 3 4 5; do
  for mode in node none; do
    "$BIN" --nproc-per-node 1 --bind $mode --tag none -- "$COPY" >>"$W/copy.$mode" ||
      echo "h2d_copy failed under --bind $mode"
  done
done
check "host-to-device copies ran bound and unbound (5 each)" \
  bash -c "[ \$(wc -l <'$W/copy.node') = 5 ] && [ \$(wc -l <'$W/copy.none') = 5 ]"
/usr/bin/python3 - "$W" <<'PY'
import statistics, sys
for mode in ("node", "none"):
    rows = [l.split() for l in open(f"{sys.argv[1]}/copy.{mode}")]
    print(f"--bind {mode}: pageable {statistics.median(float(r[1]) for r in rows):.2f} GB/s, "
          f"pinned {statistics.median(float(r[3]) for r in rows):.2f} GB/s (median of {len(rows)})")
PY
finish
