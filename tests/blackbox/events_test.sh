#!/usr/bin/env bash
# --events-file (DESIGN §6b): the job's story as JSON lines, one schema, each event as it
# happens: a failure and a restart, a stop and who sent it, a hang, two nodes meeting, the
# default under --log-dir and none without it, a file that cannot be written, a path an
# elastic job cannot expand, and a launcher moved to another node rank when one below it is lost.
# usage: events_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(dirname "$(realpath "$0")")
. "$HERE/assert.sh"
WORK=$(mktemp -d)
trap 'kill_marked_processes "aml-events-$$"; rm -rf "$WORK"' EXIT
export AML_TEST_MARK="aml-events-$$" TMPDIR=$WORK
# story FILE: FILE.story, a line an event (events_check.py); fails, saying why, on a bad line.
story() { /usr/bin/python3 "$HERE/events_check.py" "$1" >"$1.story" 2>&1 || { cat "$1.story"; return 1; }; }
# in_order FILE PATTERN...: each pattern's first line comes after the one before's.
in_order() {
  local file=$1 at=0 line; shift
  for pattern in "$@"; do
    line=$(grep -n -m1 -- "$pattern" "$file" | cut -d: -f1)
    [ -n "$line" ] && [ "$line" -gt "$at" ] || return 1
    at=$line
  done
}

# 1. Rank 1 fails in each of two rounds: every start and exit, the first failure, the restart.
"$BIN" --nproc-per-node 2 --max-restarts 1 --events-file "$WORK/one/events.jsonl" -- \
  sh -c '[ "$RANK" = 1 ] && exit 3; sleep 5' >/dev/null 2>&1
check "a failing job: its file (folder made) has the schema on every line" \
  story "$WORK/one/events.jsonl"
expected="launch node=0 round=0 rank=-
round_started node=0 round=0 rank=-
failure node=0 round=0 rank=1 exit code 3
round_ended node=0 round=0 rank=- exit_code=3
restart node=0 round=0 rank=-
round_started node=0 round=1 rank=-
failure node=0 round=1 rank=1 exit code 3
round_ended node=0 round=1 rank=- exit_code=3
end node=0 round=1 rank=- exit_code=3"
check "a failing job: launch, rounds, the first failure, the restart and the end, in order" \
  test "$(grep -v '^worker_' "$WORK/one/events.jsonl.story")" = "$expected"
check "a failing job: each round's two starts and two exits (rank 0 stopped by SIGTERM)" \
  test "$(grep -c '^worker_started' "$WORK/one/events.jsonl.story"):$(grep -c '^worker_exited node=0 round=[01] rank=0 signal 15' "$WORK/one/events.jsonl.story"):$(grep -c '^worker_exited node=0 round=[01] rank=1 exit code 3' "$WORK/one/events.jsonl.story")" = "4:2:2"
check "a failing job: the failure comes after rank 1's exit and before rank 0's" \
  in_order "$WORK/one/events.jsonl.story" '^worker_exited .*rank=1 exit code 3' \
  '^failure .*rank=1' '^worker_exited .*rank=0 signal 15'

# 2. A stop: SIGTERM from this shell, named with its pid, written while the workers still run.
"$BIN" --nproc-per-node 2 --events-file "$WORK/stop.jsonl" -- \
  sh -c 'touch "$TMPDIR/up.$RANK"; sleep 30' >/dev/null 2>&1 &
launcher=$!
for _ in $(seq 200); do [ -e "$WORK/up.0" ] && [ -e "$WORK/up.1" ] && break; sleep 0.05; done
kill -TERM "$launcher"
wait "$launcher"
status=$?
story "$WORK/stop.jsonl" >/dev/null
check "a stop: exit 143, and the stop names SIGTERM and this shell's pid" \
  test "$status:$(grep -c "^stop node=0 round=0 rank=- SIGTERM sender_pid=$$\$" "$WORK/stop.jsonl.story")" = "143:1"
check "a stop: the end says 143" grep -q '^end node=0 round=0 rank=- exit_code=143$' "$WORK/stop.jsonl.story"

# 3. Where the file goes: DIR/events.jsonl under --log-dir DIR, none with none, none by default.
"$BIN" --nproc-per-node 1 --log-dir "$WORK/logs" -- true >/dev/null 2>&1
check "--log-dir DIR: the events in DIR/events.jsonl" story "$WORK/logs/events.jsonl"
"$BIN" --nproc-per-node 1 --log-dir "$WORK/logs-none" --events-file none -- true >/dev/null 2>&1
check "--events-file none: no file beside the logs" test ! -e "$WORK/logs-none/events.jsonl"
mkdir -p "$WORK/quiet/tmp"
(cd "$WORK/quiet" && TMPDIR="$WORK/quiet/tmp" "$BIN" --nproc-per-node 1 -- true >/dev/null 2>&1)
check "no flag: no file, neither where it ran nor in TMPDIR" \
  test "$(ls -A "$WORK/quiet" "$WORK/quiet/tmp" | tr -d '\n')" = "$WORK/quiet:tmp$WORK/quiet/tmp:"
AML_LAUNCH_EVENTS_FILE="$WORK/by-variable.jsonl" "$BIN" --nproc-per-node 1 -- true >/dev/null 2>&1
check "AML_LAUNCH_EVENTS_FILE gives the file" grep -q '"kind":"end"' "$WORK/by-variable.jsonl"

# 4. Bad paths: said, nothing run.
touch "$WORK/a-file"
"$BIN" --nproc-per-node 1 --events-file "$WORK/a-file/events.jsonl" -- touch "$WORK/ran" \
  >/dev/null 2>"$WORK/bad.err"
status=$?
check "a file under a file: exit 2 naming --events-file, no worker ran" \
  test "$status:$(grep -c -- '--events-file' "$WORK/bad.err"):$([ -e "$WORK/ran" ] && echo ran)" = "2:1:"
"$BIN" --nnodes 1:2 --nproc-per-node 1 --rdzv-endpoint 127.0.0.1:29400 --dry-run \
  --events-file "$WORK/e.{node_rank}.jsonl" -- true \
  >/dev/null 2>"$WORK/elastic.err"
check "an elastic job: {node_rank} in --events-file is refused, said" \
  grep -q -- '--events-file=.*{node_rank}.*elastic job' "$WORK/elastic.err"
"$BIN" --nproc-per-node 1 --job-events-file "$WORK/a-file/job.jsonl" -- touch "$WORK/ran" \
  >/dev/null 2>"$WORK/bad-job.err"
status=$?
check "--job-events-file under a file, on node 0: exit 2 naming it, no worker ran" \
  test "$status:$(grep -c -- '--job-events-file' "$WORK/bad-job.err"):$([ -e "$WORK/ran" ] && echo ran)" = "2:1:"
expect_status "--job-events-file with no file: exit 2" 2 "$BIN" --job-events-file= -- true

# 5. A hang: the inquiry as it begins, its verdict, the end (124).
"$BIN" --nproc-per-node 1 --hang-timeout 1 --hang-startup-timeout 1 --events-file "$WORK/hang.jsonl" \
  -- sleep 60 >/dev/null 2>&1
story "$WORK/hang.jsonl" >/dev/null
check "a hang: the inquiry, then the verdict, then the end with 124" \
  in_order "$WORK/hang.jsonl.story" '^hang_inquiry node=0 round=0 rank=-$' '^hang node=0' \
  '^end node=0 round=0 rank=- exit_code=124$'

# 6. Two nodes on this machine: each file says the rendezvous formed, with its own node rank;
#    node 0 alone writes the job's file (both are given it): its own lines, node 1 joining, and
#    node 1's rank failing in round 0; both restart once.
reserve_port port || exit 1
for n in 0 1; do
  "$BIN" --nnodes 2 --node-rank $n --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" \
    --max-restarts 1 --events-file "$WORK/node{node_rank}.jsonl" \
    --job-events-file "$WORK/job.jsonl" --summary-file "$WORK/node$n.summary.json" -- \
    sh -c '[ "$RANK$TORCHELASTIC_RESTART_COUNT" = 10 ] && exit 3; exit 0' >/dev/null 2>&1 &
done
wait
story "$WORK/job.jsonl" >/dev/null
check "the job's file: node 0's lines alone (node 1 wrote none), node 1 joined once" \
  test "$(grep -vc '^[a-z_]* node=0 ' "$WORK/job.jsonl.story"):$(grep -c '^node_joined node=0 round=0 rank=- of=1$' "$WORK/job.jsonl.story"):$(grep -c '^node_joined' "$WORK/job.jsonl.story")" = "0:1:1"
check "the job's file: node 1's failure, the restart, the end" \
  in_order "$WORK/job.jsonl.story" '^launch node=0' '^failure_elsewhere node=0 round=0' \
  '^restart node=0' '^end node=0 round=1 rank=- exit_code=0$'
check "node 0's own file has node 1's joining too (the same lines)" \
  cmp -s "$WORK/job.jsonl" "$WORK/node0.jsonl"
for n in 0 1; do
  story "$WORK/node$n.jsonl" >/dev/null
  check "two nodes: node $n's file says each rendezvous began (2), round 0 formed (2 nodes), its end" \
    test "$(grep -c "^rendezvous_begun node=$n round=0" "$WORK/node$n.jsonl.story"):$(grep -c "^rendezvous_formed node=$n round=0 rank=- nodes=2$" "$WORK/node$n.jsonl.story"):$(grep -c "^end node=$n round=1 rank=- exit_code=0$" "$WORK/node$n.jsonl.story")" = "2:1:1"
done

# 7. An elastic job of three launchers (2:3 nodes) loses the one at node rank 1 (its launcher
#    killed alone: a lost node); the ranks close up and round 1 runs on two nodes. The job's file
#    says the launcher that held node rank 2 holds 1 now (node_moved, its pid, both ranks).
reserve_port port || exit 1
declare -A launcher=()
for l in a b c; do
  setsid "$BIN" --nnodes 2:3 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" \
    --max-restarts 1 --rdzv-timeout 60 --events-file "$WORK/moved.$l.jsonl" \
    --job-events-file "$WORK/moved.job.jsonl" -- \
    sh -c '[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && exec sleep 60; exit 0' >"$WORK/moved.$l.out" 2>&1 &
  launcher[$l]=$!
  sleep 0.2
done
# held RANK: the launcher whose own file says it holds node rank RANK in round 0.
held() {
  grep -l "\"kind\":\"worker_started\",\"node_rank\":$1,[^ ]*\"round\":0," "$WORK"/moved.[abc].jsonl 2>/dev/null |
    sed 's/.*moved\.\(.\)\.jsonl/\1/'
}
for _ in $(seq 300); do [ -n "$(held 0)" ] && [ -n "$(held 1)" ] && [ -n "$(held 2)" ] && break; sleep 0.1; done
lost=$(held 1) second=$(held 2)
[ -n "$lost" ] && kill -KILL -- "-${launcher[$lost]}"
survivors=0
for l in a b c; do [ "$l" = "$lost" ] || { wait "${launcher[$l]}" && survivors=$((survivors + 1)); }; done
story "$WORK/moved.job.jsonl" >/dev/null
pid2=$(/usr/bin/python3 -c 'import json, sys
print(next(json.loads(l)["details"]["pid"] for l in open(sys.argv[1]) if json.loads(l)["kind"] == "launch"))' \
  "$WORK/moved.${second:-x}.jsonl" 2>/dev/null)
check "node rank 1 lost: the two others end 0 ($survivors), the job's file says node rank 2's launcher (pid $pid2) moved to 1" \
  eval '[ "$survivors" = 2 ] && [ -n "$pid2" ] &&
    [ "$(grep -c "^node_moved node=0 round=1 rank=- of=1 from=2$" "$WORK/moved.job.jsonl.story")" = 1 ] &&
    grep "\"kind\":\"node_moved\"" "$WORK/moved.job.jsonl" | grep -q "\"pid\":$pid2,"' ||
  { cat "$WORK/moved.job.jsonl.story"; tail -n 3 "$WORK"/moved.*.out; }
check "... and no launcher that kept its rank is said to have moved" \
  test "$(grep -c "^node_moved" "$WORK/moved.job.jsonl.story")" = 1
finish
