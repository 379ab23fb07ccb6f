#!/usr/bin/env bash
# Black-box tests of stops (DESIGN §4): INT, TERM and HUP from outside stop the job, and that
# is no failure. INT reaches the workers as INT and they get --term-timeout to end on their own
# (a Python worker's KeyboardInterrupt handler runs to its end); a second stop signal moves on
# to TERM, a third to SIGKILL; the launcher says which signal stopped it and who sent it,
# exits 128+N, and names no rank as failed unless one failed before or during the stop.
# usage: stop_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
py=/usr/bin/python3

# start NAME AML_ARGS... -- COMMAND: the launcher in the background, its stderr in
# $WORK/NAME.err; $launcher is its pid (env execs it).
start() {
  local name=$1; shift
  env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" W="$WORK" "$BIN" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  launcher=$!
}
# until_files FILE...: each exists (the workers are ready), or 10 s passed.
until_files() {
  for _ in $(seq 200); do
    local all=1
    for f in "$@"; do [ -e "$f" ] || all=0; done
    [ $all = 1 ] && return 0
    sleep 0.05
  done
  return 1
}
# finish_launcher: waits for it; $status and $took_ms (since $t0).
finish_launcher() {
  wait $launcher
  status=$?
  took_ms=$((($(date +%s%N) - t0) / 1000000))
}
summary() {  # summary FILE PYTHON-ASSERTIONS: s is the --summary-file document
  $py -c "import json, sys
s = json.load(open(sys.argv[1]))
$2" "$1"
}
no_failure_named() { ! grep -q "failed first\|its stderr was empty" "$1"; }

# --- Ctrl-C: a Python worker's KeyboardInterrupt handler saves its checkpoint (it takes
# 0.5 s); the launcher waits for it, says it was stopped, exits 130.
# Every Python worker first says it is up (a file of its own).
py_up='import os, sys, time
W, R = os.environ["W"], os.environ["RANK"]
open(f"{W}/up.{R}", "w").close()
'
keyboard="$py_up"'try:
    time.sleep(60)
except KeyboardInterrupt:
    time.sleep(0.5)
    open(f"{W}/saved.{R}", "w").write("checkpoint")
    print("checkpoint saved", flush=True)'
start int --nproc-per-node 2 --summary-file "$WORK/int.json" -- $py -c "$keyboard"
until_files "$WORK/up.0" "$WORK/up.1"
t0=$(date +%s%N)
kill -INT $launcher
sender=$BASHPID
finish_launcher
check "INT: both KeyboardInterrupt handlers ran to their end (checkpoints saved)" \
  bash -c "[ \"\$(cat '$WORK/saved.0' '$WORK/saved.1')\" = checkpointcheckpoint ] && [ \$(grep -c 'checkpoint saved' '$WORK/int.out') = 2 ]"
check "INT: exit 130 ($status)" [ $status = 130 ]
check "INT: 'stopped by SIGINT from outside', the sender's pid, 2 of 2 ended within the grace after SIGINT" \
  grep -q "node 0 (.*): stopped by SIGINT from outside (sent by pid $sender, bash) at .*Z: 2 of 2 worker(s) ended within the grace after SIGINT$" "$WORK/int.err"
check "INT: no rank named as failed" no_failure_named "$WORK/int.err"
check "INT: the summary file has a stopped object, no first_failure" summary "$WORK/int.json" '
st = s["stopped"]
assert s["exit_code"] == 130 and s["first_failure"] is None, s
assert st["signal"] == 2 and st["signal_name"] == "SIGINT" and st["from"] == "outside", st
assert st["workers"] == 2 and st["ended_on_their_own"] == 2 and st["killed_after_grace"] == 0, st
assert st["sender_pid"] > 0 and st["node_rank"] == 0, st'

# --- A Python worker without a handler dies of its KeyboardInterrupt (by SIGINT): the stop's
# doing, no failure.
rm -f "$WORK"/up.*
start int-plain --nproc-per-node 2 -- $py -c "$py_up"'time.sleep(60)'
until_files "$WORK/up.0" "$WORK/up.1"
t0=$(date +%s%N)
kill -INT $launcher
finish_launcher
check "INT, no handler: exit 130, a stop, no failure ($status)" \
  bash -c "[ $status = 130 ] && grep -q 'stopped by SIGINT' '$WORK/int-plain.err'" &&
  check "INT, no handler: no rank named as failed" no_failure_named "$WORK/int-plain.err"

# --- Workers that ignore INT get the grace (--term-timeout 1), then SIGKILL.
rm -f "$WORK"/up.*
start deaf --nproc-per-node 2 --term-timeout 1 -- sh -c 'trap "" INT; touch "$W/up.$RANK"; while :; do sleep 0.05; done'
until_files "$WORK/up.0" "$WORK/up.1"
t0=$(date +%s%N)
kill -INT $launcher
finish_launcher
check "INT ignored: killed after the 1 s grace (${took_ms} ms), exit 130 ($status)" \
  bash -c "[ $status = 130 ] && [ $took_ms -ge 900 ] && [ $took_ms -lt 8000 ]"
check "INT ignored: 0 of 2 ended within the grace, 2 killed after it" \
  grep -q "stopped by SIGINT .*: 0 of 2 worker(s) ended within the grace after SIGINT, 2 killed (SIGKILL) after the grace$" "$WORK/deaf.err"

# --- A second INT moves on to TERM at once: workers that ignore INT but end on TERM.
rm -f "$WORK"/up.* "$WORK"/term.*
start twice --nproc-per-node 2 --term-timeout 60 -- sh -c 'trap "" INT; trap "touch \"\$W/term.\$RANK\"; exit 0" TERM; touch "$W/up.$RANK"; while :; do sleep 0.05; done'
until_files "$WORK/up.0" "$WORK/up.1"
t0=$(date +%s%N)
kill -INT $launcher; sleep 0.3; kill -INT $launcher
finish_launcher
check "second INT: TERM reached both workers, long before the 60 s grace (${took_ms} ms), exit 130 ($status)" \
  bash -c "[ $status = 130 ] && [ $took_ms -lt 8000 ] && [ -e '$WORK/term.0' ] && [ -e '$WORK/term.1' ]"
check "second INT: the stop line says the workers had SIGTERM after SIGINT" \
  grep -q "stopped by SIGINT .*: 2 of 2 worker(s) ended within the grace after SIGINT, then SIGTERM (a second stop signal)$" "$WORK/twice.err"

# --- TERM and HUP from outside: stops too, 143 and 129.
for sig in TERM HUP; do
  rm -f "$WORK"/up.*
  start "$sig" --nproc-per-node 2 -- sh -c 'touch "$W/up.$RANK"; while :; do sleep 0.05; done'
  until_files "$WORK/up.0" "$WORK/up.1"
  t0=$(date +%s%N)
  kill -$sig $launcher
  finish_launcher
  want=$((128 + $(kill -l $sig)))
  check "$sig: a stop, exit $want ($status), the workers that died of it are no failure" \
    bash -c "[ $status = $want ] && grep -q 'stopped by SIG$sig from outside .*: 2 of 2 worker(s) ended within the grace after SIG$sig$' '$WORK/$sig.err' && ! grep -q 'failed first' '$WORK/$sig.err'"
done

# --- TERM sent to both of the launcher's processes at once (pkill aml-launch, a scheduler that
# signals every process of a job): one stop, with the grace; the workers end on their own.
rm -f "$WORK"/up.*
start both --nproc-per-node 2 --term-timeout 30 -- sh -c 'trap "sleep 0.5; exit 0" TERM; touch "$W/up.$RANK"; while :; do sleep 0.05; done'
until_files "$WORK/up.0" "$WORK/up.1"
t0=$(date +%s%N)
kill -TERM $launcher $(pgrep -P $launcher -x aml-launch)
finish_launcher
check "TERM to both launcher processes: one stop, the workers ended within the grace (${took_ms} ms, exit $status)" \
  bash -c "[ $status = 143 ] && [ $took_ms -ge 400 ] && grep -q ': 2 of 2 worker(s) ended within the grace after SIGTERM$' '$WORK/both.err'" ||
  cat "$WORK/both.err"

# --- A failure before the stop is still the failure: rank 1 exits 5 once rank 0 ignores TERM
# (a rank 0 slower to start would die of the teardown's TERM at once), so the teardown lasts its
# grace; INT comes meanwhile.
rm -f "$WORK"/up.*
start before --nproc-per-node 2 --term-timeout 3 --summary-file "$WORK/before.json" -- sh -c \
  'trap "" TERM; touch "$W/up.$RANK"; [ "$RANK" = 1 ] && { until [ -e "$W/up.0" ]; do sleep 0.01; done; echo "bad input" >&2; exit 5; }; while :; do sleep 0.05; done'
until_files "$WORK/up.0" "$WORK/up.1"
sleep 0.5
t0=$(date +%s%N)
kill -INT $launcher
finish_launcher
check "failure before the stop: exit 5 ($status), rank 1 named as failed first" \
  bash -c "[ $status = 5 ] && grep -q 'rank 1 (local rank 1) .*failed first .*: exit code 5' '$WORK/before.err'"
check "failure before the stop: the summary file names it, and the stop" summary "$WORK/before.json" '
assert s["exit_code"] == 5 and s["first_failure"]["rank"] == 1, s
assert s["first_failure"]["stderr_tail"] == ["bad input"], s
assert s["stopped"]["signal"] == 2, s'

# --- A failure during the stop is still a failure: on INT rank 1's handler fails (exit 3),
# rank 0's ends well.
rm -f "$WORK"/up.*
start during --nproc-per-node 2 --summary-file "$WORK/during.json" -- $py -c "$py_up"'try:
    time.sleep(60)
except KeyboardInterrupt:
    if R == "1":
        print("cannot save the checkpoint", file=sys.stderr)
        sys.exit(3)'
until_files "$WORK/up.0" "$WORK/up.1"
t0=$(date +%s%N)
kill -INT $launcher
finish_launcher
check "failure during the stop: exit 3 ($status), rank 1 named as failed first" \
  bash -c "[ $status = 3 ] && grep -q 'rank 1 (local rank 1) .*failed first .*: exit code 3' '$WORK/during.err' && grep -q '| cannot save the checkpoint' '$WORK/during.err'"
check "failure during the stop: the summary file names rank 1, and the stop by INT" summary "$WORK/during.json" '
assert s["exit_code"] == 3 and s["first_failure"]["rank"] == 1, s
assert s["stopped"]["signal"] == 2 and s["stopped"]["ended_on_their_own"] == 2, s'

# --- Per process (one launcher per rank, as srun and mpirun start them), alone (--no-group:
# rank 0's launcher is not there): TERM to a rank's launcher is a stop of that rank, with no
# "failed first" and no "its stderr was empty".
rm -f "$WORK"/up.*
env -i PATH=/usr/bin:/bin W="$WORK" OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=1 \
  OMPI_COMM_WORLD_LOCAL_SIZE=2 "$BIN" --no-group --summary-file "$WORK/task.{rank}.json" -- sh -c 'touch "$W/up.$RANK"; exec sleep 60' \
  >/dev/null 2>"$WORK/task.err" &
launcher=$!
until_files "$WORK/up.1"
t0=$(date +%s%N)
kill -TERM $launcher
finish_launcher
check "per process: TERM is a stop of rank 1's launcher (143: $status)" \
  bash -c "[ $status = 143 ] && grep -q 'stopped by SIGTERM from outside .*: 1 of 1 worker(s) ended within the grace after SIGTERM$' '$WORK/task.err'"
check "per process: no rank named as failed, no empty stderr" no_failure_named "$WORK/task.err"
check "per process: the task's own summary file says stopped" summary "$WORK/task.1.json" '
assert s["exit_code"] == 143 and s["first_failure"] is None and s["stopped"]["signal"] == 15, s'

# --- Two nodes (loopback): a stop on one node stops the job on every node, each says by
# which node's signal, nobody names a failure, and every launcher exits 128+N.
# two_nodes NAME WORKER: nodes 0 and 1, two workers each; $node0 and $node1 their launchers.
two_nodes() {
  local name=$1 worker=$2 p
  reserve_port p
  rm -f "$WORK"/up.* "$WORK"/saved.*
  for n in 0 1; do
    env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" W="$WORK" "$BIN" --nnodes 2 --node-rank $n --nproc-per-node 2 \
      --master-addr 127.0.0.1 --master-port "$p" --rdzv-timeout 20 --summary-file "$WORK/$name.$n.json" \
      -- $py -c "$worker" >"$WORK/$name.$n.out" 2>"$WORK/$name.$n.err" &
    eval "node$n=\$!"
  done
  until_files "$WORK/up.0" "$WORK/up.1" "$WORK/up.2" "$WORK/up.3"
}
wait_nodes() { wait $node0; s0=$?; wait $node1; s1=$?; }

# Ctrl-C on node 1: every worker on both nodes gets INT and saves its checkpoint.
two_nodes mint "$keyboard"
kill -INT $node1
wait_nodes
check "2 nodes, INT to node 1: both exit 130 ($s0 $s1), all 4 checkpoints saved" \
  bash -c "[ '$s0 $s1' = '130 130' ] && [ \$(cat '$WORK'/saved.* | grep -o checkpoint | wc -l) = 4 ]"
check "2 nodes, INT to node 1: node 1 says it was stopped from outside" \
  grep -q "node 1 (.*): stopped by SIGINT from outside .*: 2 of 2 worker(s) ended within the grace after SIGINT$" "$WORK/mint.1.err"
check "2 nodes, INT to node 1: node 0 says the job was stopped by node 1's signal" \
  grep -q "node 0 (.*): the job was stopped by SIGINT sent to node 1 (.*)'s launcher at .*: 2 of 2 worker(s) ended within the grace after SIGINT$" "$WORK/mint.0.err"
check "2 nodes, INT to node 1: nobody names a failure or 'another node'" \
  bash -c "! grep -q 'failed\\|another node' '$WORK'/mint.*.err"
check "2 nodes, INT to node 1: the summary files say stopped, by node 1's INT" $py -c '
import json, sys
for n, source in ((0, "another node"), (1, "outside")):
    s = json.load(open(f"{sys.argv[1]}/mint.{n}.json"))
    st = s["stopped"]
    assert s["exit_code"] == 130 and s["first_failure"] is None, s
    assert st["signal"] == 2 and st["from"] == source and st["node_rank"] == 1, s' "$WORK"

# TERM to both launchers, as scancel sends it: both 143, one verdict, no failure.
two_nodes mterm "$py_up"'time.sleep(60)'
kill -TERM $node0 $node1
wait_nodes
check "2 nodes, TERM to both (scancel): both exit 143 ($s0 $s1), no failure named" \
  bash -c "[ '$s0 $s1' = '143 143' ] && ! grep -q 'failed\\|another node' '$WORK'/mterm.*.err"
check "2 nodes, TERM to both: each says it was stopped" \
  bash -c "grep -q 'node 0 (.*): .*stopped by SIGTERM' '$WORK/mterm.0.err' && grep -q 'node 1 (.*): .*stopped by SIGTERM' '$WORK/mterm.1.err'"

# TERM to node 1, then to node 0 while node 0 is already stopping for node 1's: node 1's stays
# the one named (one verdict), and node 0 says it got one too. Node 0's own TERM is sent once its
# rank 0 has its share of node 1's (term.0), and the workers take 3 s to end, so it is sent
# mid-stop however slow the machine; the handler is in place before a worker says it is up.
two_nodes mlate 'import os, signal, sys, time
def stopping(*_):
    open(os.environ["W"] + "/term." + os.environ["RANK"], "w").close()
    time.sleep(3)
    sys.exit(0)
signal.signal(signal.SIGTERM, stopping)
'"$py_up"'time.sleep(60)'
rm -f "$WORK"/term.*
kill -TERM $node1
until_files "$WORK/term.0"
kill -TERM $node0 || echo "node 0 had ended before its own TERM: the case was not tested"
wait_nodes
check "2 nodes, TERM to node 1 then to node 0: both exit 143 ($s0 $s1)" [ "$s0 $s1" = "143 143" ]
check "2 nodes, TERM to node 1 then to node 0: node 0 names node 1's and got one too" \
  grep -q "node 0 (.*): the job was stopped by SIGTERM sent to node 1 (.*)'s launcher (this node's got one too) at " "$WORK/mlate.0.err"
check "2 nodes, TERM to node 1 then to node 0: node 1 says it was stopped from outside" \
  grep -q "node 1 (.*): stopped by SIGTERM from outside" "$WORK/mlate.1.err"

# A worker failing on node 0 during a stop from node 1 is still a failure, on node 0.
two_nodes mfail "$py_up"'try:
    time.sleep(60)
except KeyboardInterrupt:
    sys.exit(6 if R == "0" else 0)'
kill -INT $node1
wait_nodes
check "2 nodes, a failure during node 1's stop: node 0 names rank 0's exit 6 ($s0), node 1 its stop ($s1)" \
  bash -c "[ '$s0' = 6 ] && grep -q 'rank 0 (local rank 0) on node 0 .*failed first .*exit code 6' '$WORK/mfail.0.err' && [ '$s1' = 130 ]"

# --- TERM after TERM (Slurm's step and job signals, srun's own, a kubelet's): every one that
# comes while the workers end or after they have ended is the same stop, and the launcher still
# says so and writes its summary (a TERM left pending when the workers were done used to end
# it silently, exit 143 and no summary).
lost=0
for try in 1 2 3 4 5; do
  rm -f "$WORK"/up.* "$WORK/again.json"
  start again --nproc-per-node 2 --summary-file "$WORK/again.json" -- sh -c \
    'trap "sleep 0.2; exit 0" TERM; touch "$W/up.$RANK"; while :; do sleep 0.05; done'
  until_files "$WORK/up.0" "$WORK/up.1"
  ( while kill -TERM $launcher 2>/dev/null; do :; done ) &
  barrage=$!
  wait $launcher
  status=$?
  wait $barrage
  if [ $status != 143 ] || [ ! -s "$WORK/again.json" ] || ! grep -q "stopped by SIGTERM" "$WORK/again.err"; then
    lost=$((lost + 1))
    echo "  try $try: exit $status, summary $( [ -s "$WORK/again.json" ] && echo written || echo missing)"
  fi
done
check "TERM after TERM, five times: each a stop, said and in the summary file, exit 143 ($lost lost)" [ $lost = 0 ]

# --- TERM in a launcher's first milliseconds (a job cancelled as it starts, a scheduler's TERM
# to a launcher just started again): a stop, said, in the summary file, exit 143, at each
# moment, of a one-node job and of an elastic launcher waiting for its round. Before, the
# signal's default action ended it in its first ~50 ms (the sanitizer build), or while a round
# was prepared: exit 143, nothing said, no summary. Each TERM comes once the launcher holds
# TERM (its SigBlk): before its first instruction (the loader's time) nothing can tell it.
holds_term() {  # holds_term PID: TERM (15: bit 14) is in its blocked set (builtins alone: fast)
  local key value
  while read -r key value; do
    [ "$key" = SigBlk: ] && { [ $(((16#$value >> 14) & 1)) = 1 ]; return; }
  done <"/proc/$1/status" 2>/dev/null
  return 1
}
lost=0
reserve_port p
for delay in 0 0.001 0.003 0.01 0.03 0.1; do
  for kind in one elastic; do
    rm -f "$WORK/early.json"
    if [ $kind = one ]; then
      start early --nproc-per-node 2 --summary-file "$WORK/early.json" -- sleep 30
    else
      start early --nnodes 2:3 --rdzv-endpoint "127.0.0.1:$p" --rdzv-id "early-$$" \
        --summary-file "$WORK/early.json" -- sleep 30
    fi
    for _ in $(seq 20000); do holds_term $launcher && break; done
    sleep $delay
    kill -TERM $launcher
    wait $launcher
    status=$?
    if [ $status != 143 ] || [ ! -s "$WORK/early.json" ] || ! grep -q "stopped by SIGTERM" "$WORK/early.err" ||
      ! summary "$WORK/early.json" 'assert s["exit_code"] == 143 and s["stopped"]["signal"] == 15' 2>/dev/null; then
      lost=$((lost + 1))
      echo "  $kind, TERM after $delay s: exit $status, summary $( [ -s "$WORK/early.json" ] && echo written || echo missing)"
    fi
  done
done
check "TERM in the first milliseconds, 12 times: each a stop, said and in the summary file, exit 143 ($lost lost)" [ $lost = 0 ]

# --- The default grace fits inside a scheduler's own: Kubernetes (terminationGracePeriodSeconds)
# and Slurm (KillWait) SIGKILL 30 s after their SIGTERM. Workers that ignore TERM are killed by
# the launcher itself in time to say so and write its summary; played here as the kubelet does
# it: TERM, then SIGKILL 30 s later to whatever is left.
rm -f "$WORK"/up.*
start grace --nproc-per-node 2 --summary-file "$WORK/grace.json" -- sh -c \
  'trap "" TERM; touch "$W/up.$RANK"; while :; do sleep 0.1; done'
until_files "$WORK/up.0" "$WORK/up.1"
t0=$(date +%s%N)
kill -TERM $launcher
for _ in $(seq 300); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
killed=no
kill -0 $launcher 2>/dev/null && { kill -KILL $launcher; killed=yes; }
finish_launcher
check "the default grace: stopped and reported before a SIGKILL 30 s after TERM (${took_ms} ms, SIGKILLed: $killed)" \
  bash -c "[ $killed = no ] && [ $status = 143 ] && [ $took_ms -lt 30000 ] &&
           grep -q '0 of 2 worker(s) ended within the grace after SIGTERM' '$WORK/grace.err'"
check "the default grace: the summary file says stopped, workers killed after the grace" \
  summary "$WORK/grace.json" 'assert s["exit_code"] == 143 and s["stopped"]["signal"] == 15, s'

# --- A failure with no stop is still reported as before (and not as a stop).
env -i PATH=/usr/bin:/bin "$BIN" --nproc-per-node 2 -- sh -c '[ "$RANK" = 0 ] && exit 9; sleep 60' \
  >/dev/null 2>"$WORK/plain.err"
status=$?
check "no stop: a failure is a failure (exit $status), nothing said of a stop" \
  bash -c "[ $status = 9 ] && grep -q 'failed first' '$WORK/plain.err' && ! grep -q 'stopped by' '$WORK/plain.err'"
finish
