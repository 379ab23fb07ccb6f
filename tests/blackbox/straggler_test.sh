#!/usr/bin/env bash
# --straggler-check (DESIGN §6): a slow rank named while the job runs, from torch's own flight
# recorder (torch 2.15 over Gloo, hang/straggler_train.py; its ranks' threads play NCCL's part
# of the pipe, hang/flight_pipe.py). Every 2 s each launcher asks its ranks for a dump, keeps
# each group's calls since the last sample, and the deciding node (node 0) measures each rank's
# lateness at the calls every rank had: a rank that sleeps longer before each all_reduce is
# named (the line, the straggler event, aml_launch_rank_lateness_seconds), equal ranks name
# nobody, and across two namespace hosts the times cross through node 0's store, put on its
# clock; an elastic job benches the straggler's node at its next round (--bench-stragglers).
# The job itself is untouched: every step of every rank, each sum checked.
# usage: straggler_test.sh AML_LAUNCH TORCH_2_15_PYTHON
set -u
BIN=$(realpath "$1")
PY=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
WORK=$(mktemp -d)
MARK="aml-strag-$$"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NET="st$$"
trap 'kill -KILL $(grep -l "MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3) 2>/dev/null; bash "$CLUSTER" down "$NET" 3 >/dev/null 2>&1; rm -rf "$WORK"' EXIT
cd "$WORK"
check "torch 2.15 is installed at $PY (scripts/install-deps.sh)" \
  "$PY" -c 'import torch, sys; sys.exit(torch.__version__ < "2.15")'
STEPS=400  # the most: each job ends once the test has seen what it waits for (STOP_FILE)

# --- The flags.
expect_status "--straggler-check 0.5 is refused (exit 2): a second at least" 2 \
  "$BIN" --straggler-check 0.5 -- true
"$BIN" --bench-stragglers -- true 2>"$WORK/bench.err"
check "--bench-stragglers alone: exit 2, naming --straggler-check ($?)" \
  grep -q -- "--bench-stragglers.*--straggler-check S with it" "$WORK/bench.err"
got=$(env -i PATH=/usr/bin:/bin HOME="$WORK" "$BIN" --straggler-check 60 --log-dir /logs --dry-run -- "$PY" train.py |
  grep -o 'TORCH_\(FR\|NCCL\)_[A-Z_]*=[^ ,"]*' | grep -v ASYNC_ERROR | sort -u | tr '\n' ' ')
check "--straggler-check alone sets the recorder's variables, torch 2.15's names ($got)" \
  [ "$got" = "TORCH_FR_BUFFER_SIZE=2000 TORCH_FR_DUMP_ON_TIMEOUT=1 TORCH_FR_DUMP_TEMP_FILE=/logs/nccl_trace_rank_ TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/logs/nccl_pipe_rank_ " ]

# --- torch 1.13 (Debian's), which has no recorder: nothing answers, and that is said once, at
# the round's end (while a job runs only after 10 minutes: a rank's pipe comes with its first
# NCCL group); the job is untouched.
env -i TMPDIR="$WORK" PATH=/usr/bin:/bin MARK="$MARK" HOME="$WORK" "$BIN" --nproc-per-node 2 \
  --straggler-check 1 --events-file "$WORK/old.events" -- /usr/bin/python3 -c '
import time, torch, torch.distributed as dist
dist.init_process_group("gloo")
for _ in range(8):
    t = torch.ones(2); dist.all_reduce(t); time.sleep(0.5)
print("sum", t[0].item())' >"$WORK/old.out" 2>"$WORK/old.err"
status=$?
check "torch 1.13: the job ends 0, its sums right ($status)" bash -c \
  '[ "$1" = 0 ] && [ "$(grep -c "sum 2.0" "$2/old.out")" = 2 ]' _ "$status" "$WORK" || tail -3 "$WORK/old.err"
check "torch 1.13: said once that no rank gave a dump, nobody measured or named" bash -c \
  '[ "$(grep -c "^aml-launch: --straggler-check: no rank on this node gave a flight recorder dump in [0-9]* samples (nothing listened on .*nccl_pipe_rank_<rank>.pipe: not torch, a torch without a recorder, or no NCCL process group): its ranks were not measured$" "$1/old.err")" = 1 ] &&
   ! grep -q "is a straggler\|\"lateness\"" "$1/old.err" "$1/old.events"' _ "$WORK" || grep aml-launch "$WORK/old.err"

# fatal_lines FILE...: what a failed job's launcher said of its ranks, and the first lines of
# any rank's fatal error (its Python's, or a C++ terminate) with what came before them.
fatal_lines() {
  local f
  for f in "$@"; do
    echo "  --- $f"
    grep -a "^aml-launch: .*\(rank\|failed\|stopped\)" "$f" | head -n 8 | sed 's/^/  | /'
    grep -a -m 2 -B 6 -A 4 "Fatal Python error\|terminate called\|Aborted\|what():" "$f" | sed 's/^/  | /'
  done
}
# every_step RANKS FILE...: ranks 0..RANKS-1 (their lines in the FILEs) each did the same steps,
# 5 at least, none left out (a job ends once rank 0 reads its STOP_FILE: every rank after the
# same step).
every_step() {
  local ranks=$1 r count first=""
  shift
  for r in $(seq 0 $((ranks - 1))); do
    count=$(cat "$@" | grep -c "^\[rank $r\] rank $r step [0-9]* at")
    [ "$(cat "$@" | grep "^\[rank $r\] rank $r step [0-9]* at" | cut -d' ' -f6 | sort -n | uniq | wc -l)" = "$count" ] || return 1
    first=${first:-$count}
    [ "$count" = "$first" ] && [ "$count" -ge 5 ] || return 1
  done
}
# until_or_over SECONDS PID CONDITION...: waits until the condition holds, the job PID ended, or
# SECONDS passed (the checks after it say which).
until_or_over() {
  local tenths=$(($1 * 10)) pid=$2
  shift 2
  for _ in $(seq "$tenths"); do
    "$@" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
lateness_samples() {  # FILE N (a file not there yet: none)
  local n
  n=$(grep -c '"kind":"lateness"' "$1" 2>/dev/null)
  [ "${n:-0}" -ge "$2" ]
}
# events_has FILE PYTHON-CONDITION (on e, the events as a list)
events_has() {
  python3 -c '
import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
late = [x for x in e if x["kind"] == "lateness"]
named = [x for x in e if x["kind"] == "straggler"]
ok = eval(sys.argv[2])
if not ok:
    print("lateness samples (each rank, its mean lateness):",
          [[(r[0], round(r[2], 3)) for r in x["details"]["ranks"]] for x in late])
    print("straggler events:", json.dumps(named))
sys.exit(0 if ok else 1)' "$1" "$2"
}
export -f every_step events_has

# --- One node, 3 ranks: rank 1 computes 0.25 s longer at each 0.3 s step.
one_slow() {
  env -i TMPDIR="$WORK" PATH=/usr/bin:/bin MARK="$MARK" HOME="$WORK" STOP_FILE="$WORK/slow.stop" \
    "$BIN" --nproc-per-node 3 --straggler-check 2 --metrics-port 0 --log-dir "$WORK/slow.logs" --events-file "$WORK/slow.events" \
    -- "$PY" "$HERE/hang/straggler_train.py" slow "$STEPS" 0.3 0.25 \
    >"$WORK/slow.out" 2>"$WORK/slow.err" &
  local job=$! url="" scrape=""
  until_or_over 150 $job grep -q "is a straggler" "$WORK/slow.err"
  url=$(grep -o 'metrics at http://[0-9.:]*' "$WORK/slow.err" | cut -d' ' -f3)
  [ -n "$url" ] && scrape=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + "/metrics", timeout=10).read().decode())' "$url" |
    grep '^aml_launch_rank_lateness_seconds')
  touch "$WORK/slow.stop"
  wait $job
  local status=$?
  check "slow rank: the job ends 0, every rank's every step done, each sum right ($status)" \
    bash -c '[ "$1" = 0 ] && "$2" 3 "$3"' _ "$status" every_step "$WORK/slow.out" || fatal_lines "$WORK/slow.err"
  check "slow rank: named on stderr: rank 1, late by about 0.25 s of a 0.55 s step, 3 of its last samples" \
    grep -q "^aml-launch: rank 1 (node 0) is a straggler: it enqueued its collectives 0\.[12][0-9]* s after the earliest rank on average, [3-6][0-9] % of the 0\.[56][0-9]* s step, last in [345] of the last [345] samples (--straggler-check)$" \
    "$WORK/slow.err" || grep aml-launch "$WORK/slow.err"
  check "slow rank: the straggler event names rank 1 once, after 3 lateness samples or more" \
    events_has "$WORK/slow.events" 'len(named) == 1 and named[0]["rank"] == 1 and named[0]["details"]["samples"] >= 3 and len(late) >= 3'
  # A rank whose dump came too late for a sample (a loaded machine) is left out of that one.
  check "slow rank: each lateness sample after the first that holds rank 1 has it last, and 2 or more compare every rank" \
    events_has "$WORK/slow.events" 'all(max(x["details"]["ranks"], key=lambda r: r[2])[0] == 1 for x in late[1:] if 1 in [r[0] for r in x["details"]["ranks"]]) and sum(len(x["details"]["ranks"]) == 3 for x in late[1:]) >= 2'
  check "slow rank: the metric gives each rank's lateness, rank 1's above 0.1 s ($scrape)" python3 -c '
import re, sys
v = {int(r): float(s) for r, s in re.findall(r"rank=\"(\d)\",node=\"0\"\} ([0-9.e-]+)", sys.argv[1])}
sys.exit(0 if sorted(v) == [0, 1, 2] and v[1] > 0.1 and v[1] > v[0] and v[1] > v[2] else 1)' "$scrape"
}

# --- One node, 3 equal ranks: samples are taken, nobody is named.
one_equal() {
  env -i TMPDIR="$WORK" PATH=/usr/bin:/bin MARK="$MARK" HOME="$WORK" STOP_FILE="$WORK/equal.stop" \
    "$BIN" --nproc-per-node 3 --straggler-check 2 --log-dir "$WORK/equal.logs" --events-file "$WORK/equal.events" \
    -- "$PY" "$HERE/hang/straggler_train.py" equal "$STEPS" 0.3 \
    >"$WORK/equal.out" 2>"$WORK/equal.err" &
  local job=$!
  # Four samples: a rank last in three of them would have been named at the third.
  until_or_over 150 $job lateness_samples "$WORK/equal.events" 4
  touch "$WORK/equal.stop"
  wait $job
  local status=$?
  check "equal ranks: the job ends 0, every step done ($status)" \
    bash -c '[ "$1" = 0 ] && "$2" 3 "$3"' _ "$status" every_step "$WORK/equal.out" || fatal_lines "$WORK/equal.err"
  check "equal ranks: no straggler named (line or event), over 4 samples or more" bash -c \
    '! grep -q "is a straggler" "$1/equal.err" && "$2" "$1/equal.events" "len(named) == 0 and len(late) >= 4"' \
    _ "$WORK" events_has || grep aml-launch "$WORK/equal.err"
}

# --- Two namespace hosts x 2 ranks, rank 3 (node 1) slow, --bench-stragglers in a job that is
# not elastic: node 0 decides with node 1's calls from its store. Node 1's clock is 3 s ahead
# (its launcher's and its ranks' recorders' alike): its offset, measured over the store link,
# puts its ranks back on node 0's clock, or ranks 2 and 3 would both be 3 s late.
two_hosts() {
  local n pids=() s0 s1
  for n in 0 1; do
    bash "$CLUSTER" exec "$NET" $n timeout --preserve-status 200 env -i TMPDIR="$WORK" PATH=/usr/bin:/bin \
      MARK="$MARK" HOME="$WORK" SLOW_RANK=3 STOP_FILE="$WORK/two.stop" AML_LAUNCH_TEST_CLOCK_SKEW_NS=$((n * 3000000000)) \
      "$BIN" --nnodes 2 --node-rank $n --nproc-per-node 2 \
      --master-addr "$(bash "$CLUSTER" addr 0)" --master-port 29571 --straggler-check 2 --bench-stragglers \
      --log-dir "$WORK/two.$n.logs" --events-file "$WORK/two.$n.events" \
      -- "$PY" "$HERE/hang/straggler_train.py" slow "$STEPS" 0.3 0.25 \
      >"$WORK/two.$n.out" 2>"$WORK/two.$n.err" &
    pids[n]=$!
  done
  until_or_over 150 ${pids[0]} eval 'grep -q "is a straggler" "$WORK/two.0.err" && lateness_samples "$WORK/two.0.events" 3'
  touch "$WORK/two.stop"
  wait ${pids[0]}; s0=$?
  wait ${pids[1]}; s1=$?
  check "two hosts: both end 0, every step done ($s0 $s1)" bash -c \
    '[ "$1 $2" = "0 0" ] && "$3" 4 "$4/two.0.out" "$4/two.1.out"' \
    _ "$s0" "$s1" every_step "$WORK" || fatal_lines "$WORK"/two.*.err
  check "two hosts, node 1's clock 3 s ahead: node 0 names rank 3 on node 1, late by 0.1-0.3 s (not 3), and says a static job benches nothing" \
    grep -q "^aml-launch: rank 3 (node 1) is a straggler: it enqueued its collectives 0\.[12][0-9]* s after .*; not benched: only an elastic job (--nnodes MIN:MAX) benches a node$" \
    "$WORK/two.0.err" || grep aml-launch "$WORK"/two.*.err
  check "two hosts: node 0's samples hold all 4 ranks, ranks 2 and 3 on node 1" \
    events_has "$WORK/two.0.events" 'any(sorted(map(tuple, (r[:2] for r in x["details"]["ranks"]))) == [(0, 0), (1, 0), (2, 1), (3, 1)] for x in late) and named[0]["rank"] == 3'
  check "two hosts: rank 2 (node 1, on time) is never late by a second after the first sample (the ranks' start): the offset was applied" \
    events_has "$WORK/two.0.events" 'all(r[2] < 1 for x in late[1:] for r in x["details"]["ranks"] if r[0] == 2) and len(late) >= 3'
  check "two hosts: node 1 decides nothing (no lateness samples, no line)" bash -c \
    '"$2" "$1/two.1.events" "not late and not named" && ! grep -q "is a straggler" "$1/two.1.err"' _ "$WORK" events_has
}

# --- An elastic job (2:2 and a spare) with --bench-stragglers: host 1's rank is named; when
# round 0 then fails (rank 0 exits 3), whoever gives round 1's seats benches host 1 and seats
# the spare; the job ends 0 on all three hosts.
elastic_bench() {
  local n pids=() statuses=""
  for n in 0 1 2; do
    bash "$CLUSTER" exec "$NET" $n timeout --preserve-status 240 env -i TMPDIR="$WORK" PATH=/usr/bin:/bin \
      MARK="$MARK" HOME="$WORK" SLOW_RANK=$([ $n = 1 ] && echo 1 || echo 9) FAIL_FILE="$WORK/bench.fail" \
      LATER_STEPS=3 "$BIN" --nnodes 2:2 --nproc-per-node 1 --rdzv-endpoint "$(bash "$CLUSTER" addr 0):29572" \
      --rdzv-id "bench-$$" --max-restarts 1 --straggler-check 2 --bench-stragglers \
      --log-dir "$WORK/bench.$n.logs" --events-file "$WORK/bench.$n.events" \
      -- "$PY" "$HERE/hang/straggler_train.py" slow 1000 0.3 0.25 >"$WORK/bench.$n.out" 2>"$WORK/bench.$n.err" &
    pids[n]=$!
    sleep 1
  done
  for _ in $(seq 1500); do
    grep -q "is a straggler" "$WORK/bench.0.err" && break
    sleep 0.1
  done
  touch "$WORK/bench.fail"
  for n in 0 1 2; do wait ${pids[n]}; statuses+="$? "; done
  check "elastic: node 0 names rank 1 and says its node is benched at the next round" \
    grep -q "^aml-launch: rank 1 (node 1) is a straggler: .*; its node is benched at the next round where a spare or MIN allows$" \
    "$WORK/bench.0.err" || grep aml-launch "$WORK"/bench.*.err
  check "elastic: host 1 sits round 1 out, benched for its straggler (--bench-stragglers)" \
    grep -q "this node is benched (its rank was a straggler (--bench-stragglers)" "$WORK/bench.1.err" ||
    grep aml-launch "$WORK/bench.1.err"
  check "elastic: the spare (host 2) runs round 1 to its end, and all three end 0 ($statuses)" bash -c \
    '[ "$1" = "0 0 0 " ] && grep -q "rank 1 step 2 at" "$2/bench.2.out"' _ "$statuses" "$WORK" ||
    fatal_lines "$WORK"/bench.*.err
}

bash "$CLUSTER" up "$NET" 3
run_cases one_slow one_equal two_hosts elastic_bench
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
