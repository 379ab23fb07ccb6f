#!/usr/bin/env bash
# What --bind's placement costs a launch: the layout read and the placement alone (Google
# Benchmark, on the 8-GPU fixture and on this machine), and whole launches side by side in one
# hyperfine run: --dry-run on the 8-GPU fixture with --bind none / auto / exclusive, and
# launching 8 workers of /bin/true on this machine with --bind none / auto / node.
# usage: benchmarks/placement_cost.sh [build dir]   (needs hyperfine and /usr/bin/python3)
set -eu
BUILD=${1:-build}
BIN=$BUILD/launcher/aml-launch
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
/usr/bin/python3 "$HERE/../tests/fixtures/machines/make_machines.py" "$W/machines"
FIXTURE=$W/machines/nd-h100-v5
"$BUILD/benchmarks/bench_placement" "$FIXTURE" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true 2>/dev/null | grep -E "median|Benchmark"
hyperfine -N --style none --warmup 20 --runs 300 --export-json "$W/h.json" \
  -n "fixture --dry-run --bind none" "env AML_LAUNCH_MACHINE_ROOT=$FIXTURE $BIN --nproc-per-node 8 --bind none --dry-run -- /bin/true" \
  -n "fixture --dry-run --bind auto" "env AML_LAUNCH_MACHINE_ROOT=$FIXTURE $BIN --nproc-per-node 8 --bind auto --dry-run -- /bin/true" \
  -n "fixture --dry-run --bind exclusive" "env AML_LAUNCH_MACHINE_ROOT=$FIXTURE $BIN --nproc-per-node 8 --bind exclusive --dry-run -- /bin/true" \
  -n "8 x /bin/true --bind none" "$BIN --nproc-per-node 8 --bind none -- /bin/true" \
  -n "8 x /bin/true --bind auto" "$BIN --nproc-per-node 8 --bind auto -- /bin/true" \
  -n "8 x /bin/true --bind node" "$BIN --nproc-per-node 8 --bind node -- /bin/true" >/dev/null
/usr/bin/python3 - "$W/h.json" <<'PY'
import json, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
print("| launch | median [ms] | vs --bind none of the same kind |")
print("|---|---:|---:|")
for i, r in enumerate(results):
    base = statistics.median(results[0 if i < 3 else 3]["times"])
    m = statistics.median(r["times"])
    print(f"| `{r['command']}` | {m * 1000:.2f} | {m / base:.2f}x |")
PY
