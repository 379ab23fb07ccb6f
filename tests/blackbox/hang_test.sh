#!/usr/bin/env bash
# Hung jobs (DESIGN §6, --hang-timeout): a real torch gloo job whose rank 2 gets stuck while
# the others wait in all_reduce is stopped, rank 2 named with its frame, every rank's stacks
# in its log; with py-spy and without it (faulthandler); ranks that show progress only through
# aml_progress(), or only one rank printing, are not hung; a native worker blocked in read()
# is found by gdb, or by /proc without gdb; the NCCL Flight Recorder is asked for its dump;
# --max-restarts restarts a hung job like any failure.
# usage: hang_test.sh AML_LAUNCH BUSY_PROGRESS BLOCKED_READ
set -u
BIN=$(realpath "$1")
BUSY=$(realpath "$2")
BLOCKED=$(realpath "$3")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
WORK=$(mktemp -d)
MARK="aml-hang-$$"
trap 'kill -KILL $(grep -l "MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3) 2>/dev/null; rm -rf "$WORK"' EXIT
py=/usr/bin/python3
cd "$WORK"

# The launcher finds py-spy and gdb on its PATH: each case gets a PATH of its own that has
# them or not (the workers are started by their full paths).
tools() {  # tools NAME TOOL...: $WORK/NAME/bin with sh and the tools named
  mkdir -p "$WORK/$1/bin"
  ln -sf "$(command -v sh)" "$WORK/$1/bin/sh"
  local name=$1 tool
  shift
  for tool in "$@"; do
    local at
    at=$(command -v "$tool" || $py -c "import shutil, sys; print(shutil.which(sys.argv[1]) or '')" "$tool")
    [ -n "$at" ] && ln -sf "$at" "$WORK/$name/bin/$tool"
  done
  echo "$WORK/$name/bin"
}
# The executable itself (where pip put it), not a shim that needs the caller's PATH.
PYSPY=$(python3 -c "import os, sysconfig; p = os.path.join(sysconfig.get_path('scripts'), 'py-spy'); print(p if os.access(p, os.X_OK) else '')" 2>/dev/null)
[ -n "$PYSPY" ] || PYSPY=$(command -v py-spy)
check "py-spy is installed (scripts/install-deps.sh)" [ -n "$PYSPY" ]
check "gdb is installed" command -v gdb
PYSPY_DIR=$(dirname "${PYSPY:-/nonexistent/py-spy}")

# torch NAME PATH [FLAGS...]: the 4-rank gloo job; $status, $ms (from rank 2's stall, which it
# writes down, until the job ended: importing torch on a loaded machine is not the launcher's
# time, and took over 20 s in a suite run).
torch_job() {
  local name=$1 path=$2
  shift 2
  rm -f "$WORK/$name.stuck"
  env -i TMPDIR="$WORK" PATH="$path" MARK="$MARK" HOME="$WORK" HANG_STUCK_FILE="$WORK/$name.stuck" "$BIN" \
    --nproc-per-node 4 --log-dir "$WORK/$name.logs" --summary-file "$WORK/$name.json" "$@" \
    -- $py "$HERE/hang/hang_train.py" >"$WORK/$name.out" 2>"$WORK/$name.err"
  status=$?
  local ended=$(($(date +%s%N) / 1000000))
  ms=-1
  if [ -e "$WORK/$name.stuck" ]; then ms=$((ended - $(cat "$WORK/$name.stuck"))); fi
}
verdict_re='rank 2 is in load_batch (hang_train.py:[0-9]*); ranks 0, 1 and 3 wait in all_reduce (distributed_c10d.py:[0-9]*)'
# torch 1.13 (Debian's) has no flight recorder: that is said, and the stacks alone name rank 2.
no_recorder="; flight recorder: no rank's flight recorder answered its pipe (a torch without one, or no NCCL process group): the stacks alone say where the ranks are"

for how in faulthandler py-spy; do
  if [ $how = py-spy ]; then path=$(tools with-pyspy); ln -sf "$PYSPY" "$path/py-spy"; else path=$(tools no-pyspy gdb); fi
  torch_job "$how" "$path" --hang-timeout 5
  check "$how: rank 2 stuck, --hang-timeout 5: stopped as a hang, exit 124 ($status), within 30 s of its stall ($ms ms)" \
    bash -c "[ $status = 124 ] && [ $ms -ge 0 ] && [ $ms -lt 30000 ]" || tail -5 "$WORK/$how.err"
  check "$how: the verdict names rank 2 in load_batch and the others in all_reduce" \
    grep -q "aml-launch: $verdict_re" "$WORK/$how.err" || grep aml-launch "$WORK/$how.err"
  check "$how: each rank's line (its frame, its /proc state)" bash -c \
    "grep -q 'rank 2 (node 0, pid [0-9]*): load_batch (hang_train.py:[0-9]*); S (sleeping)' '$WORK/$how.err' &&
     grep -q 'rank 0 (node 0, pid [0-9]*): all_reduce (distributed_c10d.py:[0-9]*); S (sleeping)' '$WORK/$how.err'"
  check "$how: every rank's log holds its stacks (Python, from $how)" bash -c \
    "for r in 0 1 2 3; do grep -q -- '--- Python stacks ($how)' '$WORK/$how.logs/std_log_process_'\$r.txt || exit 1; done"
  check "$how: the summary file has the hang (verdict, every rank's place), exit 124" $py -c '
import json, re, sys
s = json.load(open(sys.argv[1]))
h = s["hang"]
assert s["exit_code"] == 124 and s["first_failure"] is None, s
assert re.fullmatch(sys.argv[2], h["verdict"]), h["verdict"]
assert [r["rank"] for r in h["ranks"]] == [0, 1, 2, 3], h
assert h["ranks"][2]["place"].startswith("load_batch (hang_train.py:"), h' "$WORK/$how.json" \
    "$(sed 's/(/\\(/g; s/)/\\)/g' <<<"$verdict_re$no_recorder")"
done
check "faulthandler: without py-spy, SIGABRT was the ranks' last signal, their stacks on stderr" \
  grep -q "Current thread 0x" "$WORK/faulthandler.logs/std_log_process_2.txt"
check "faulthandler: and gdb's native stacks are in the log all the same" \
  grep -q -- "--- native stacks (gdb)" "$WORK/faulthandler.logs/std_log_process_2.txt"

# --- A restart: the hang is a failure like any other; the second round does not get stuck.
torch_job restart "$(tools restart)" --hang-timeout 5 --max-restarts 1
check "--max-restarts 1: the hung round is restarted, the next one succeeds (exit $status)" \
  bash -c "[ $status = 0 ] && grep -q 'restarting the workers (restart 1 of 1)' '$WORK/restart.err'" ||
  tail -40 "$WORK/restart.err"

# --- Not hung: a rank that computes without a word but calls aml_progress(); a job whose only
# printing rank is rank 0.
env -i TMPDIR="$WORK" PATH="$(tools quiet)" MARK="$MARK" "$BIN" --nproc-per-node 2 --hang-timeout 1 -- "$BUSY" \
  >"$WORK/quiet.out" 2>"$WORK/quiet.err"
status=$?
check "busy and silent for 3 s, calling aml_progress(), --hang-timeout 1: not hung (exit $status)" \
  [ $status = 0 ] || cat "$WORK/quiet.err"
env -i TMPDIR="$WORK" PATH="$(tools chatty sleep)" MARK="$MARK" "$BIN" --nproc-per-node 3 --hang-timeout 1 -- sh -c \
  'if [ "$RANK" = 0 ]; then for i in 1 2 3 4 5 6 7 8 9 10; do echo "step $i"; sleep 0.3; done; else sleep 3; fi' \
  >"$WORK/chatty.out" 2>"$WORK/chatty.err"
status=$?
check "only rank 0 prints (every 0.3 s for 3 s), --hang-timeout 1: not hung (exit $status)" [ $status = 0 ]

# --- Silent start-up with a log directory (stdout read back from the file): 3 s before the
# first line is start-up, not a hang, though the file's tail is looked at from the start. A
# loaded CI run took 4 ranks importing torch from a busy disk for a hang this way.
env -i TMPDIR="$WORK" PATH="$(tools quiet-start sleep)" MARK="$MARK" "$BIN" --nproc-per-node 2 --hang-timeout 1 \
  --log-dir "$WORK/quiet-start.logs" -- sh -c 'sleep 3; echo "rank $RANK up"; sleep 0.5; echo "rank $RANK done"' \
  >"$WORK/quiet-start.out" 2>"$WORK/quiet-start.err"
status=$?
check "silent for 3 s before the first line, --log-dir, --hang-timeout 1: start-up, not hung (exit $status)" \
  bash -c "[ $status = 0 ] && [ \$(grep -c 'rank [01] done' '$WORK/quiet-start.out') = 2 ]" ||
  grep aml-launch "$WORK/quiet-start.err"

# --- A native worker blocked in read() on a pipe (rank 0) while rank 1 sleeps. Neither ever
# shows progress: their silence is start-up until --hang-startup-timeout.
for how in gdb proc; do
  if [ $how = gdb ]; then path=$(tools native-gdb gdb); else path=$(tools native-proc); fi
  env -i PATH="$path" MARK="$MARK" TMPDIR="$WORK/tmp.$how" "$BIN" --nproc-per-node 2 --hang-timeout 1 --hang-startup-timeout 2 -- "$BLOCKED" \
    >"$WORK/native-$how.out" 2>"$WORK/native-$how.err"
  status=$?
  check "native, $how: blocked in read(), exit 124 ($status)" [ $status = 124 ]
  if [ $how = gdb ]; then
    check "native, gdb: without a log directory the stacks go to a file per rank (named on stderr)" bash -c \
      "grep -q 'every rank.s stacks: $WORK/tmp.gdb/aml-launch-.*/hang_stacks_rank_<rank>.txt' '$WORK/native-gdb.err' &&
       grep -q -- '--- native stacks (gdb)' $WORK/tmp.gdb/aml-launch-*/hang_stacks_rank_0.txt" ||
      grep aml-launch "$WORK/native-gdb.err"
    check "native, gdb: rank 0 is named in read, from its caller's source line" \
      grep -q "rank 0 is in read < wait_for_input (blocked_read.cpp:[0-9]*)" "$WORK/native-gdb.err" ||
      grep aml-launch "$WORK/native-gdb.err"
  else
    check "native, /proc: rank 0 is named by where the kernel has it wait (pipe_read), rank 1 too" bash -c \
      "grep -q 'rank 0 is in the kernel.s [a-z_]*pipe_read' '$WORK/native-proc.err' &&
       grep -q 'rank 1 (node 0, pid [0-9]*): the kernel.s hrtimer_nanosleep; S (sleeping)' '$WORK/native-proc.err'" ||
      grep aml-launch "$WORK/native-proc.err"
  fi
done

# --- The NCCL Flight Recorder: its variables are set, and its pipe written at the hang.
env -i TMPDIR="$WORK" PATH="$(tools fr)" MARK="$MARK" "$BIN" --nproc-per-node 2 --hang-timeout 1 --hang-startup-timeout 2 --log-dir "$WORK/fr.logs" \
  -- $py "$HERE/hang/flight_recorder.py" >"$WORK/fr.out" 2>"$WORK/fr.err"
status=$?
check "Flight Recorder: exit 124 ($status); each rank's pipe was written and it dumped into the log directory" \
  bash -c "[ $status = 124 ] && grep -q 'flight recorder of rank 0' '$WORK/fr.logs/nccl_trace_rank_0' &&
           grep -q 'flight recorder of rank 1' '$WORK/fr.logs/nccl_trace_rank_1'" || cat "$WORK/fr.err"
plan=$(env -i PATH=/usr/bin:/bin "$BIN" --hang-timeout 30 --log-dir /logs --dry-run -- true)
check "--dry-run shows what --hang-timeout gives the workers (faulthandler, Flight Recorder)" bash -c \
  'grep -q "PYTHONFAULTHANDLER=1" <<<"$1" && grep -q "TORCH_NCCL_TRACE_BUFFER_SIZE=" <<<"$1" &&
   grep -q "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/logs/nccl_pipe_rank_" <<<"$1"' _ "$plan"

# --- Two hosts (network namespaces) x 2 ranks, the stuck rank 2 on node 1: the nodes find
# the job hung together (each node's ranks quiet), pool a digest of each rank through the
# store, and print the same verdict.
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NET="hg$$"
trap 'kill -KILL $(grep -l "MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3) 2>/dev/null; bash "$CLUSTER" down "$NET" 2; rm -rf "$WORK"' EXIT
bash "$CLUSTER" up "$NET" 2
# two_hosts NAME PORT PATH FLAGS... -- COMMAND...: a launcher on each host, 2 ranks each, at
# most 60 s; $s0 $s1 their statuses, $ms until both ended.
two_hosts() {
  local name=$1 port=$2 path=$3 t0 n
  shift 3
  t0=$(date +%s%N)
  for n in 0 1; do
    bash "$CLUSTER" exec "$NET" $n timeout --preserve-status 60 env -i TMPDIR="$WORK" PATH="$path" MARK="$MARK" \
      HOME="$WORK" "$BIN" --nnodes 2 --node-rank $n --nproc-per-node 2 \
      --master-addr "$(bash "$CLUSTER" addr 0)" --master-port "$port" \
      --summary-file "$WORK/$name.$n.json" "$@" >"$WORK/$name.$n.out" 2>"$WORK/$name.$n.err" &
    pids[n]=$!
  done
  wait ${pids[0]}; s0=$?
  wait ${pids[1]}; s1=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
}
two_hosts two 29533 "$(tools two-nodes gdb)" --hang-timeout 5 -- $py "$HERE/hang/hang_train.py"
check "two nodes, rank 2 stuck on node 1: both exit 124 ($s0 $s1) within 60 s ($ms ms)" \
  bash -c "[ '$s0 $s1' = '124 124' ] && [ $ms -lt 60000 ]" || cat "$WORK"/two.*.err
v0=$(grep "^aml-launch: rank 2 (node 1) is in" "$WORK/two.0.err")
v1=$(grep "^aml-launch: rank 2 (node 1) is in" "$WORK/two.1.err")
check "two nodes: both print the same verdict, naming rank 2 on node 1 ($v0)" bash -c \
  '[ -n "$1" ] && [ "$1" = "$2" ] && grep -q "rank 2 (node 1) is in load_batch (hang_train.py:[0-9]*); ranks 0, 1 and 3 (nodes 0 and 1) wait in all_reduce" <<<"$1"' \
  _ "$v0" "$v1" || grep aml-launch "$WORK"/two.*.err
check "two nodes: both summary files carry every node's ranks in the hang object" $py -c '
import json, sys
for n in (0, 1):
    h = json.load(open(f"{sys.argv[1]}/two.{n}.json"))["hang"]
    assert [(r["rank"], r["node_rank"]) for r in h["ranks"]] == [(0, 0), (1, 0), (2, 1), (3, 1)], h' "$WORK"

# Node 0's ranks finish at once; node 1's stay silent in sleep: node 0, done itself, still
# finds the job hung, and both nodes stop with 124 naming node 1's ranks.
two_hosts late 29534 "$(tools late gdb sleep)" --hang-timeout 2 --hang-startup-timeout 3 -- sh -c '[ "$GROUP_RANK" = 0 ] || exec sleep 600'
check "two nodes, node 0's ranks done, node 1's silent: both exit 124 ($s0 $s1) within 30 s ($ms ms)" \
  bash -c "[ '$s0 $s1' = '124 124' ] && [ $ms -lt 30000 ]" || cat "$WORK"/late.*.err
check "two nodes, node 0's ranks done: the summary files name node 1's ranks 2 and 3" $py -c '
import json, sys
for n in (0, 1):
    h = json.load(open(f"{sys.argv[1]}/late.{n}.json"))["hang"]
    assert [(r["rank"], r["node_rank"]) for r in h["ranks"]] == [(2, 1), (3, 1)], h' "$WORK"

# --- Bad values are refused, naming what was wrong.
out=$(env -i PATH=/usr/bin:/bin "$BIN" --hang-timeout soon -- true 2>&1); status=$?
check "--hang-timeout soon: exit 2 naming the flag ($out)" bash -c "[ $status = 2 ] && grep -q -- '--hang-timeout' <<<'$out'"
out=$(env -i PATH=/usr/bin:/bin AML_LAUNCH_HANG_TIMEOUT=-3 "$BIN" -- true 2>&1); status=$?
check "AML_LAUNCH_HANG_TIMEOUT=-3: exit 2 naming the variable ($out)" bash -c "[ $status = 2 ] && grep -q AML_LAUNCH_HANG_TIMEOUT <<<'$out'"
finish
