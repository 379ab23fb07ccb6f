#!/usr/bin/env bash
# What a one-node launch of 8 workers of /bin/true costs, in the kernel's own counts: `perf stat`
# of this build's aml-launch and of another (an earlier build), side by side, rounds alternating
# (the machine is shared and noisy: compare within a round, take medians over rounds). Also the
# bare posix_spawn-and-wait floor (benchmarks/spawn_floor.c) in the same rounds.
# Per row: the median over rounds of each round's mean elapsed time, task-clock (CPU time of
# the launcher and its workers), context switches and page faults.
# usage: [STAGES=1] [EVENTS=1] [OBSERVED=1] bash benchmarks/launch_perf_stat.sh BUILD_DIR BASELINE_AML_LAUNCH [ROUNDS [RUNS]]
set -eu
build=$(realpath "$1")
baseline=$(realpath "$2")
rounds=${3:-6}
runs=${4:-50}
floor="$build/benchmarks/spawn_floor"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A commands=(
  [floor]="$floor 8 /bin/true"
  [aml]="$build/launcher/aml-launch --nproc-per-node 8 -- /bin/true"
  [baseline]="$baseline --nproc-per-node 8 -- /bin/true"
)
names=(floor aml baseline)
# STAGES=1: also what the launch is made of, this build's alone: its exec and start (--version),
# the plan (--dry-run), and the launch with no workers' store served (--worker-store torch).
if [ "${STAGES:-0}" = 1 ]; then
  commands[exec_only]="$build/launcher/aml-launch --version"
  commands[plan_only]="$build/launcher/aml-launch --dry-run --nproc-per-node 8 -- /bin/true"
  commands[no_store]="$build/launcher/aml-launch --nproc-per-node 8 --worker-store torch -- /bin/true"
  names+=(exec_only plan_only no_store)
fi
# EVENTS=1: also this build with --events-file on (the file in this script's own folder).
if [ "${EVENTS:-0}" = 1 ]; then
  commands[events_on]="$build/launcher/aml-launch --nproc-per-node 8 --events-file $work/events.jsonl -- /bin/true"
  names+=(events_on)
fi
# OBSERVED=1: also this build with its events and its metrics on (--metrics-port 0: a free port).
if [ "${OBSERVED:-0}" = 1 ]; then
  commands[observed]="$build/launcher/aml-launch --nproc-per-node 8 --events-file $work/observed.jsonl --metrics-port 0 -- /bin/true"
  names+=(observed)
fi
for round in $(seq "$rounds"); do
  for name in "${names[@]}"; do
    # -x,: one CSV line a counter: value,unit,event,...; the elapsed time from --summary's end.
    env -i PATH=/usr/bin:/bin perf stat -r "$runs" -x, \
      -e task-clock,context-switches,cpu-migrations,page-faults \
      ${commands[$name]} >/dev/null 2>"$work/$name.$round"
  done
done
/usr/bin/python3 - "$work" "$rounds" "${names[@]}" <<'EOF'
import statistics, sys
work, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for name in names:
    counts = {}
    for r in range(1, rounds + 1):
        for line in open(f"{work}/{name}.{r}"):
            parts = line.strip().split(",")
            if len(parts) > 2 and parts[0] not in ("", "<not counted>", "<not supported>"):
                counts.setdefault(parts[2], []).append(float(parts[0]))
    rows[name] = {event: statistics.median(values) for event, values in counts.items()}
print(f"| per launch (median of {rounds} rounds' means) | task-clock [ms] | context switches | "
      "page faults | vs floor (task-clock) |")
print("|---|---:|---:|---:|---:|")
base = rows["floor"]["task-clock"]
for name in names:
    row = rows[name]
    print(f"| {name} | {row['task-clock']:.2f} | {row['context-switches']:.1f} | "
          f"{row['page-faults']:.0f} | {row['task-clock'] / base:.2f}x |")
print(f"aml / baseline (task-clock): {rows['aml']['task-clock'] / rows['baseline']['task-clock']:.3f}")
for name in ("events_on", "observed"):
    if name in rows:
        print(f"{name} / aml (task-clock): {rows[name]['task-clock'] / rows['aml']['task-clock']:.3f}")
EOF
