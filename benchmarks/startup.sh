#!/usr/bin/env bash
# Whole-process start-up, side by side in one hyperfine run: the bare command, the env -i
# wrapper the other rows need, aml-launch planning only (--dry-run), and aml-launch running
# the command as one rank of an Open MPI job (detect, plan, spawn, wait). Prints medians.
# usage: benchmarks/startup.sh [build dir]   (needs hyperfine and /usr/bin/python3)
set -eu
BUILD=${1:-build}
BIN=$BUILD/launcher/aml-launch
MPI_ENV="env -i PATH=/usr/bin:/bin OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=1"
json=$(mktemp)
trap 'rm -f "$json"' EXIT
hyperfine -N --style none --warmup 20 --runs 500 --export-json "$json" \
  -n "/bin/true" "/bin/true" \
  -n "env -i ... /bin/true" "$MPI_ENV /bin/true" \
  -n "env -i ... aml-launch --dry-run --format json" "$MPI_ENV $BIN --dry-run --format json -- /bin/true" \
  -n "env -i ... aml-launch -- /bin/true" "$MPI_ENV $BIN -- /bin/true" >/dev/null
/usr/bin/python3 - "$json" <<'PY'
import json, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
base = statistics.median(results[1]["times"])
print("| command | median [ms] | vs env -i /bin/true |")
print("|---|---:|---:|")
for r in results:
    m = statistics.median(r["times"])
    print(f"| `{r['command']}` | {m * 1000:.2f} | {m / base:.2f}x |")
PY
