#!/usr/bin/env bash
# A hang verdict is never wrong (DESIGN §6, --hang-timeout): a silent start-up is not a hang;
# a rank that moves while the launcher looks, or used CPU between two looks, calls the inquiry
# off and the job goes on. The inquiry runs beside the loop: with a py-spy made slow, lines are
# relayed as they come, a SIGINT is a stop within 1 s, a rank that fails is the first failure.
# A job that never gets going is stopped by --hang-startup-timeout.
# usage: hang_calloff_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
WORK=$(mktemp -d)
MARK="aml-calloff-$$"
leftovers() { grep -l "MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
trap 'kill -KILL $(leftovers) 2>/dev/null; rm -rf "$WORK"' EXIT
py=/usr/bin/python3
SPELL="$HERE/hang/quiet_spell.py"
cd "$WORK"

# A PATH with sh and sleep, and a py-spy that first sleeps SECONDS (a slow tool on a busy
# host), then is the real one where there is one.
slow_pyspy() {  # slow_pyspy NAME SECONDS: prints the directory
  local bin="$WORK/$1/bin" real
  mkdir -p "$bin"
  ln -sf "$(command -v sh)" "$bin/sh"
  ln -sf "$(command -v sleep)" "$bin/sleep"
  real=$(python3 -c "import os, sysconfig; p = os.path.join(sysconfig.get_path('scripts'), 'py-spy'); print(p if os.access(p, os.X_OK) else '')" 2>/dev/null)
  [ -n "$real" ] || real=$(command -v py-spy || echo false)
  printf '#!/bin/sh\nsleep %s\nexec %s "$@"\n' "$2" "$real" >"$bin/py-spy"
  chmod +x "$bin/py-spy"
  echo "$bin"
}
# launch NAME PATH FLAGS... -- COMMAND...: the launcher, its stdout stamped line by line with
# the time each line arrived ("<arrival> <line>"); $status, $ms.
launch() {
  local name=$1 path=$2 t0
  shift 2
  t0=$(date +%s%N)
  env -i TMPDIR="$WORK" PATH="$path" MARK="$MARK" HOME="$WORK" "$BIN" --summary-file "$WORK/$name.json" "$@" \
    2>"$WORK/$name.err" | $py -u -c '
import sys, time
for line in sys.stdin:
    print(f"{time.time():.3f} {line}", end="", flush=True)' >"$WORK/$name.out"
  status=${PIPESTATUS[0]}
  ms=$((($(date +%s%N) - t0) / 1000000))
}
looked='looking at every rank before the job is stopped'
summary() {  # summary FILE PYTHON-ASSERTIONS: s is the --summary-file document
  $py -c "import json, sys
s = json.load(open(sys.argv[1]))
$2" "$1"
}

# --- The false hang of a busy machine, without luck: 4 torch gloo ranks silent for 8 s before
# init_process_group (more than --hang-timeout 3), two CPU-bound processes beside them.
for i in 1 2; do env MARK="$MARK" $py -c 'while True: pass' & done
launch start "$(slow_pyspy start 0)" --nproc-per-node 4 --hang-timeout 3 -- $py "$HERE/hang/silent_start.py" 8
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null
check "silent start-up of 8 s, --hang-timeout 3, a busy host: not a hang, exit 0 ($status)" \
  bash -c "[ $status = 0 ] && [ \$(grep -c 'rank [0-3] done' '$WORK/start.out') = 4 ]" || tail -5 "$WORK/start.err"
check "silent start-up: no inquiry was begun" bash -c "! grep -q '$looked' '$WORK/start.err'" ||
  grep aml-launch "$WORK/start.err"

# --- Ranks quiet for 4 s after their first step, --hang-timeout 2, py-spy slow (5 s): the
# inquiry begins, the ranks print again while py-spy still sleeps: it is called off, the
# job finishes 0, and their lines were relayed as they came.
launch moved "$(slow_pyspy moved 5)" --nproc-per-node 2 --hang-timeout 2 -- $py "$SPELL" sleep 4
check "ranks move during the inquiry: the job goes on and ends 0 ($status)" [ $status = 0 ] ||
  cat "$WORK/moved.err"
check "ranks move during the inquiry: begun, then 'hang inquiry called off: rank N moved'" bash -c \
  "grep -q '$looked' '$WORK/moved.err' && grep -q '^aml-launch: hang inquiry called off: rank [01] moved$' '$WORK/moved.err'" ||
  grep aml-launch "$WORK/moved.err"
check "ranks move during the inquiry: the summary has no hang" summary "$WORK/moved.json" '
assert s["exit_code"] == 0 and s.get("hang") is None, s'
lag=$($py -c '
import sys
lags = [float(a) - float(l.split(" at ")[1]) for a, l in
        (line.split(" ", 1) for line in open(sys.argv[1])) if " at " in l]
print(f"{max(lags) * 1000:.0f}" if len(lags) == 2 else "none")' "$WORK/moved.out")
check "ranks move during the inquiry: their lines reached stdout within 1 s (the slowest after $lag ms)" \
  bash -c "[ '$lag' != none ] && [ $lag -lt 1000 ]" || cat "$WORK/moved.out"
sleep 0.3
check "ranks move during the inquiry: the slow py-spy is gone with the inquiry" test -z "$(leftovers)"

# --- Rank 0 computes for 4 s without a word, no py-spy (/proc only): the second look sees
# its CPU time; the inquiry is called off naming it.
launch spin "$(slow_pyspy spin 0 && rm "$WORK/spin/bin/py-spy")" --nproc-per-node 2 --hang-timeout 2 -- $py "$SPELL" spin 4
check "rank 0 computing silently: 'called off: rank 0 used CPU', exit 0 ($status)" bash -c \
  "[ $status = 0 ] && grep -q '^aml-launch: hang inquiry called off: rank 0 used CPU ([0-9.]* s in [0-9.]* s)$' '$WORK/spin.err'" ||
  grep aml-launch "$WORK/spin.err"

# --- SIGINT during the inquiry (py-spy sleeping 30 s): a stop within 1 s, exit 130, the
# workers got INT, nothing left.
env -i TMPDIR="$WORK" PATH="$(slow_pyspy int 30)" MARK="$MARK" "$BIN" --nproc-per-node 2 --hang-timeout 1 \
  --summary-file "$WORK/int.json" -- $py "$SPELL" stuck >"$WORK/int.out" 2>"$WORK/int.err" &
launcher=$!
for _ in $(seq 200); do grep -q "$looked" "$WORK/int.err" 2>/dev/null && break; sleep 0.1; done
sleep 0.5  # well into py-spy's sleep
t0=$(date +%s%N)
kill -INT $launcher
wait $launcher
status=$?
took=$((($(date +%s%N) - t0) / 1000000))
check "SIGINT during the inquiry: a stop, exit 130 ($status), within 1 s ($took ms)" \
  bash -c "grep -q '$looked' '$WORK/int.err' && [ $status = 130 ] && [ $took -lt 1000 ]" || cat "$WORK/int.err"
check "SIGINT during the inquiry: both workers got SIGINT" \
  bash -c "grep -q 'rank 0 got SIGINT' '$WORK/int.out' && grep -q 'rank 1 got SIGINT' '$WORK/int.out'" ||
  cat "$WORK/int.out"
check "SIGINT during the inquiry: the summary has the stop, no hang" summary "$WORK/int.json" '
assert s["exit_code"] == 130 and s.get("hang") is None and s["stopped"]["signal_name"] == "SIGINT", s'
sleep 0.3
check "SIGINT during the inquiry: nothing of the job is left (slow py-spy included)" test -z "$(leftovers)"

# --- Rank 1 fails during the inquiry: the failure is the verdict, not a hang.
launch fail "$(slow_pyspy fail 30)" --nproc-per-node 2 --hang-timeout 1 -- $py "$SPELL" fail 3
check "rank 1 fails during the inquiry: its failure is the verdict (exit $status), within 10 s ($ms ms)" \
  bash -c "[ $status = 3 ] && [ $ms -lt 10000 ] && grep -q '$looked' '$WORK/fail.err'" || cat "$WORK/fail.err"
check "rank 1 fails during the inquiry: the summary's first failure is rank 1, no hang" summary "$WORK/fail.json" '
assert s["first_failure"]["rank"] == 1 and s.get("hang") is None, s'

# --- A job that never gets going: silent from its start. --hang-timeout 1 does not stop it;
# --hang-startup-timeout 4 does, and says so.
launch never "$(slow_pyspy never 0)" --nproc-per-node 2 --hang-timeout 1 --hang-startup-timeout 4 -- sleep 600
check "never started, --hang-startup-timeout 4: exit 124 ($status) after 4 s, not 1 ($ms ms)" \
  bash -c "[ $status = 124 ] && [ $ms -ge 4000 ] && [ $ms -lt 30000 ]" || cat "$WORK/never.err"
check "never started: the console names --hang-startup-timeout" \
  grep -q "no rank showed any progress in the 4 s since the job started (--hang-startup-timeout)" "$WORK/never.err" ||
  grep aml-launch "$WORK/never.err"
check "--help says why start-up has a bound of its own" \
  bash -c "'$BIN' --help | grep -A4 -- '--hang-startup-timeout' | grep -q 'imports, loading a checkpoint'"
expect_status "--hang-startup-timeout 0 is refused" 2 env -i PATH=/usr/bin:/bin "$BIN" --hang-timeout 1 --hang-startup-timeout 0 -- true
finish
