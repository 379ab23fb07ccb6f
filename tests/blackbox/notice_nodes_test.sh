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
  for p in $(grep -l -s -a "$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
    [ "$p" != $$ ] && kill -KILL "$p" 2>/dev/null
  done
  $ETCD down "$WORK/etcd" >/dev/null 2>&1
  "$CLUSTER" down "$NAME" "$HOSTS" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

if ! "$CLUSTER" up "$NAME" "$HOSTS" 2>"$WORK/up.err"; then
  cat "$WORK/up.err"
  check "network namespaces can be made (ip netns, veth, bridge)" false
  finish; exit
fi
MASTER=$("$CLUSTER" addr 0)

# serve JOB SCENARIO: the metadata service in node 1's namespace; its event comes once the
# job's 4 workers are up. $PORT: where it listens there.
serve() {
  local job=$1
  (exec "$CLUSTER" exec "$NAME" 1 env "$MARK" EVENT_AFTER_FILES="$(echo "$WORK/$job"/up.{0,1,2,3})" \
    /usr/bin/python3 "$HERE/fake_metadata.py" "$WORK/$job.port" "$2" "vm-under-test" 0.2 30) &
  disown  # killed at the end, without a word
  for _ in $(seq 100); do [ -s "$WORK/$job.port" ] && break; sleep 0.05; done
  PORT=$(cat "$WORK/$job.port")
}
# run_job JOB ARGS...: both nodes' launchers to their end; statuses in $WORK/JOB.status.I
run_job() {
  local job=$1 pids=() i url
  shift
  mkdir -p "$WORK/$job"
  for i in 0 1; do
    url="http://127.0.0.1:$([ "$i" = 1 ] && echo "$PORT" || echo 9)"
    (
      "$CLUSTER" exec "$NAME" "$i" env -i PATH=/usr/bin:/bin HOME="$WORK" "$MARK" W="$WORK/$job" \
        NOTICE_RUN_S="${NOTICE_RUN_S:-60}" AML_LAUNCH_METADATA_URL="$url" \
        timeout 90 "$BIN" --nnodes 2 --node-rank "$i" --nproc-per-node 2 --notice-from azure \
        --summary-file "$WORK/$job.summary.$i" --rdzv-timeout 60 "$@" \
        -- /usr/bin/python3 "$HERE/notice_worker.py" "$READER" >"$WORK/$job.out.$i" 2>&1
      write_status "$WORK/$job.status.$i" $?
    ) &
    pids+=($!)
  done
  wait "${pids[@]}"
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
