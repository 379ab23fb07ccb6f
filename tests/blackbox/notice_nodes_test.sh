#!/usr/bin/env bash
# Notices of the job's end across nodes (issue 55): two test hosts in network namespaces
# (tests/cluster/netns_cluster.sh) x 2 workers (notice_worker.py), a metadata service of the
# test's own (fake_metadata.py) on loopback in node 1's namespace alone; node 0 asks its own
# loopback, where nothing listens.
#  1. node 0's store: Azure Preempt of node 1's VM, 30 s ahead, once all 4 workers are up: all
#     4 get SIGUSR1 and the file within 200 ms of the answer that carried it to node 1, save and
#     exit 0; both nodes end preempted (exit 200), and node 0's summary names node 1's notice.
#  2. node 0's store: an event of another VM changes nothing on either node (exit 0).
#  3. etcd (one member on a third host): the same Preempt, the same 200 ms, the same end.
#  4. node 0's store, --node-timeout 3: a Freeze of node 1's VM (5 s), and node 1 paused 5 s
#     (SIGSTOP) at its time, is ridden out; the same pause after another VM's freeze is a loss;
#     a Freeze of node 0's VM and node 0 paused is ridden out too.
# usage: notice_nodes_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
ETCD="bash $HERE/../cluster/etcd_cluster.sh"
READER="$HERE/../../python/aml_launch/_notice.py"
NAME="ntc$$"
HOSTS=3 # 0 and 1 run the job; 2 holds etcd's member
WORK=$(mktemp -d)
MARK="AML_TEST_MARK=$NAME"
cleanup() {
  kill_marked_processes "$NAME"
  $ETCD down "$WORK/etcd" >/dev/null 2>&1
  "$CLUSTER" down "$NAME" "$HOSTS" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

netns_up "$CLUSTER" "$NAME" "$HOSTS" || { finish; exit; }
MASTER=$("$CLUSTER" addr 0)

# serve JOB SCENARIO [NODE [AHEAD_S]]: the metadata service in node NODE's namespace (1); its
# event comes once the job's 4 workers are up, AHEAD_S (30) before its time. $PORT: where it
# listens there; $SERVED: that node.
serve() {
  local job=$1
  SERVED=${3:-1}
  (exec "$CLUSTER" exec "$NAME" "$SERVED" env "$MARK" EVENT_AFTER_FILES="$(echo "$WORK/$job"/up.{0,1,2,3})" \
    /usr/bin/python3 "$HERE/fake_metadata.py" "$WORK/$job.port" "$2" "vm-under-test" 0.2 "${4:-30}") &
  disown  # killed at the end, without a word
  for _ in $(seq 100); do [ -s "$WORK/$job.port" ] && break; sleep 0.05; done
  PORT=$(cat "$WORK/$job.port")
}
# start_node JOB I ARGS...: node I's launcher in the background (its pid in $NODE_PIDS), to its
# end; its status in $WORK/JOB.status.I
NODE_PIDS=()
start_node() {
  local job=$1 i=$2 url
  shift 2
  mkdir -p "$WORK/$job"
  url="http://127.0.0.1:$([ "$i" = "$SERVED" ] && echo "$PORT" || echo 9)"
  (
    "$CLUSTER" exec "$NAME" "$i" env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" "$MARK" AML_TEST_NODE="$i" W="$WORK/$job" \
      NOTICE_RUN_S="${NOTICE_RUN_S:-60}" AML_LAUNCH_METADATA_URL="$url" \
      timeout 90 "$BIN" --nnodes 2 --node-rank "$i" --nproc-per-node 2 --notice-from azure \
      --summary-file "$WORK/$job.summary.$i" --rdzv-timeout 60 "$@" \
      -- /usr/bin/python3 "$HERE/notice_worker.py" "$READER" >"$WORK/$job.out.$i" 2>&1
    write_status "$WORK/$job.status.$i" $?
  ) &
  NODE_PIDS+=($!)
}
# run_job JOB ARGS...: both nodes' launchers to their end
run_job() {
  start_node "$1" 0 "${@:2}"
  start_node "$1" 1 "${@:2}"
  wait "${NODE_PIDS[@]}"
  NODE_PIDS=()
}
# node_pids I [EXE]: the processes of node I (its launcher's alone, with EXE)
node_pids() {
  grep -l -s -a "$MARK" /proc/[0-9]*/environ 2>/dev/null | while read -r env; do
    tr '\0' '\n' <"$env" 2>/dev/null | grep -qx "AML_TEST_NODE=$1" || continue
    pid=$(echo "$env" | cut -d/ -f3)
    [ -z "${2:-}" ] || [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$2" ] && echo "$pid"
  done
}
# pause_node JOB NODE: that node's launcher and workers stopped (SIGSTOP) for 5 s from 2 s after
# the event (its time, as the service gave it), as a VM's freeze pauses all of it
pause_node() {
  (
    for _ in $(seq 600); do [ -s "$WORK/$1.port.event" ] && break; sleep 0.05; done
    sleep "$(/usr/bin/python3 -c 'import sys, time; print(max(0, float(open(sys.argv[1]).read()) + 2 - time.time()))' "$WORK/$1.port.event")"
    pids=$(node_pids "$2")
    kill -STOP $pids 2>/dev/null
    sleep 5
    kill -CONT $pids 2>/dev/null
  ) &
}
statuses() { cat "$WORK/$1.status.0" "$WORK/$1.status.1" 2>/dev/null | tr '\n' ' '; }
show() { for i in 0 1; do echo "--- node $i"; cat "$WORK/$1.out.$i"; done; }
# latest JOB: the milliseconds from the answer that carried the event to node 1 until the
# last of the 4 workers had both the signal and the file
latest() {
  /usr/bin/python3 -c 'import sys
told = float(open(sys.argv[1]).read())
worst = 0
for path in sys.argv[2:]:
    f = open(path).read().split()
    worst = max(worst, float(f[4]) - told, float(f[5]) - told)
print(int(worst * 1000))' "$WORK/$1.port.event" "$WORK/$1"/got.{0,1,2,3} 2>/dev/null || echo 99999
}
# preempted JOB: every check of a Preempt of node 1's VM that reached the whole job
preempted() {
  local job=$1 what=$2 late
  check "$what: both nodes end preempted (exit $(statuses "$job"), wanted 200 200)" \
    [ "$(statuses "$job")" = "200 200 " ] || show "$job"
  check "$what: all 4 workers read node 1's notice (kind, source, node, about 29 s left)" bash -c \
    "for r in 0 1 2 3; do grep -Eq '^preempt azure-scheduled-events 1 (29|30) ' '$WORK/$job/got.'\$r || exit 1; done" ||
    { cat "$WORK/$job"/got.* 2>/dev/null; show "$job"; }
  late=$(latest "$job")
  check "$what: all 4 had SIGUSR1 and the file within 200 ms of node 1's answer (${late} ms)" \
    [ "$late" -ge 0 ] && [ "$late" -le 200 ]
  check "$what: node 0 says node 1's notice, and its summary names it" bash -c \
    "grep -q 'notice: Preempt of vm-under-test (azure-scheduled-events) on node 1' '$WORK/$job.out.0' &&
     /usr/bin/python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
assert s[\"exit_code\"] == 200 and s[\"notice\"][\"node_rank\"] == 1 and s[\"notice\"][\"preempted\"], s' '$WORK/$job.summary.0'" ||
    show "$job"
}

# 1. node 0's store.
serve store preempt
run_job store --master-addr "$MASTER" --master-port 29531
preempted store "node 0's store"

# 2. Another VM's event.
serve other other-vm
NOTICE_RUN_S=4 run_job other --master-addr "$MASTER" --master-port 29532
check "an event of another VM changes nothing on either node (exit $(statuses other))" bash -c \
  "[ '$(statuses other)' = '0 0 ' ] && ! ls '$WORK/other'/got.[0-3] >/dev/null 2>&1 &&
   ! grep -q 'notice:' '$WORK/other.out.0' '$WORK/other.out.1'" || show other

# 4. A Freeze of node 1's VM, 5 s from 2 s after it is heard, with --node-timeout 3: node 1's
# launcher and workers are paused for 5 s then, and nobody counts it lost; the workers are not
# told (a pause is the launchers' business) and run to their end.
serve freeze freeze 1 2
pause_node freeze 1
NOTICE_RUN_S=11 run_job freeze --master-addr "$MASTER" --master-port 29533 --node-timeout 3
check "a Freeze of node 1 (5 s, --node-timeout 3) is ridden out by both nodes (exit $(statuses freeze))" bash -c \
  "[ '$(statuses freeze)' = '0 0 ' ] && ! ls '$WORK/freeze'/got.[0-3] >/dev/null 2>&1 &&
   grep -q 'notice: Freeze of vm-under-test (azure-scheduled-events) on node 1.*the job rides it out' '$WORK/freeze.out.0'" ||
  show freeze
# The same pause after another VM's freeze is a loss: the allowance is the notice's.
serve unfrozen other-vm 1 2
pause_node unfrozen 1
NOTICE_RUN_S=11 run_job unfrozen --master-addr "$MASTER" --master-port 29534 --node-timeout 3
check "the same pause of node 1 without its Freeze: node 0 counts it lost (exit $(statuses unfrozen))" bash -c \
  "[ \$(cat '$WORK/unfrozen.status.0') != 0 ] && grep -q 'no heartbeat for over 3 s' '$WORK/unfrozen.out.0'" ||
  show unfrozen
# Node 0's own Freeze: the store's host paused, its followers wait, and so does node 0 itself.
serve freeze0 freeze 0 2
pause_node freeze0 0
NOTICE_RUN_S=11 run_job freeze0 --master-addr "$MASTER" --master-port 29535 --node-timeout 3
check "a Freeze of node 0 (5 s, --node-timeout 3) is ridden out by both nodes (exit $(statuses freeze0))" bash -c \
  "[ '$(statuses freeze0)' = '0 0 ' ] &&
   grep -q 'notice: Freeze of vm-under-test (azure-scheduled-events) on node 0.*the job rides it out' '$WORK/freeze0.out.1'" ||
  show freeze0

# 5. --notice-signal USR1 to node 1's launcher while it waits for node 0 (the rendezvous, before
# any round): held, not its end (the signal's default), and the job's notice once the round
# starts: both nodes end preempted.
SERVED=none
start_node early 1 --master-addr "$MASTER" --master-port 29536 --notice-signal USR1
for _ in $(seq 200); do [ -n "$(node_pids 1 "$BIN")" ] && break; sleep 0.05; done
sleep 1
kill -USR1 $(node_pids 1 "$BIN") 2>/dev/null
start_node early 0 --master-addr "$MASTER" --master-port 29536 --notice-signal USR1
wait "${NODE_PIDS[@]}"
NODE_PIDS=()
check "USR1 to node 1's launcher during the rendezvous is the job's notice: both end preempted (exit $(statuses early))" bash -c \
  "[ '$(statuses early)' = '200 200 ' ] && grep -q 'notice: SIGUSR1 to the launcher (--notice-signal) (signal) on node 1' '$WORK/early.out.0'" ||
  show early

# 3. etcd.
if $ETCD up "$NAME" "$WORK/etcd" 2 >"$WORK/etcd.err" 2>&1; then
  serve etcd preempt
  run_job etcd --rdzv-backend etcd --rdzv-endpoint "$($ETCD endpoints 2)" --rdzv-id "notice-$$" \
    --node-timeout 10
  preempted etcd "etcd"
else
  cat "$WORK/etcd.err"
  check "etcd's member starts on host 2" false
fi
finish
