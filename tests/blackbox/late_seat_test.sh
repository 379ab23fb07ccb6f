#!/usr/bin/env bash
# A seat given while its launcher was away, in a job that ended before it came back (etcd): a
# hot spare paused as a node's loss seats it in the next round; that round fails and the job
# ends (no restart left); the spare, continued, reads its seat. etcd keeps the job's end: the
# spare ends as the job did and takes no seat in a round that is over. Before, it joined that
# round (the fault campaigns' etcd 308: a spare seated late joined a round that had failed,
# heard its machine's notice and named that round's failure, where the job had ended for
# another).
# usage: late_seat_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
export TMPDIR="$WORK"
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
ETCD="$(dirname "$0")/../cluster/etcd_cluster.sh"
NET="ls$$"
HOSTS=6  # 0-2: the launchers; 3-5: etcd's members
kill_all() { kill -KILL $(grep -l "MARK=aml-late-$$-" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3) 2>/dev/null; }
trap 'kill_all; bash "$ETCD" down "$WORK"; bash "$CLUSTER" down "$NET" $HOSTS; rm -rf "$WORK"' EXIT
netns_up "$CLUSTER" "$NET" $HOSTS || { finish; exit; }
check "etcd: a three-member cluster starts on hosts 3-5" bash "$ETCD" up "$NET" "$WORK" 3 4 5
ENDPOINTS=$(bash "$ETCD" endpoints 3 4 5)

# Each worker says it ran in its round, then runs until $W/fail.HOST.ROUND makes it exit 3.
cat >"$WORK/worker.sh" <<'EOF'
#!/bin/sh
r=$TORCHELASTIC_RESTART_COUNT
touch "$W/ran.$HOST_ID.$r"
while :; do
  [ -e "$W/fail.$HOST_ID.$r" ] && exit 3
  sleep 0.05
done
EOF
chmod +x "$WORK/worker.sh"
start() {  # start HOST: its launcher, in the background
  (
    bash "$CLUSTER" exec "$NET" "$1" env -i PATH=/usr/bin:/bin W="$WORK" HOST_ID="$1" \
      MARK="aml-late-$$-$1" "$BIN" --nnodes 2:2 --node-timeout 30 --max-restarts 1 \
      --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "late-$$" \
      --events-file "$WORK/events.$1" -- "$WORK/worker.sh" >"$WORK/out.$1" 2>&1
    write_status "$WORK/status.$1" $?
  ) 2>/dev/null &
}
pids_of() { grep -l -a "MARK=aml-late-$$-$1\b" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
said() { for _ in $(seq 200); do grep -q "$2" "$WORK/out.$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

start 0
sleep 1  # host 0 first: node 0
start 1
wait_file "$WORK/ran.0.0" 20 && wait_file "$WORK/ran.1.0" 5
start 2
check "round 0 runs on hosts 0 and 1; host 2 waits as a hot spare" said 2 "hot spare"
kill -STOP $(pids_of 2)
kill -KILL $(pids_of 1)
check "host 1's launcher killed: round 1 runs on node 0, the paused spare given its seat" \
  wait_file "$WORK/ran.0.1" 20
touch "$WORK/fail.0.1"
wait_file "$WORK/status.0" 20
check "round 1 fails with no restart left: the job ends 3 on host 0 ($(cat "$WORK/status.0" 2>/dev/null))" \
  [ "$(cat "$WORK/status.0" 2>/dev/null)" = 3 ]
kill -CONT $(pids_of 2)
wait_file "$WORK/status.2" 40
check "the spare, continued, ends as the job did: 3 ($(cat "$WORK/status.2" 2>/dev/null))" \
  [ "$(cat "$WORK/status.2" 2>/dev/null)" = 3 ]
check "... and takes no seat in the round that is over (no round formed on it, no worker ran)" \
  bash -c "! grep -q '\"rendezvous_formed\"' '$WORK/events.2' && [ ! -e '$WORK/ran.2.1' ]"
[ "$failed" = 0 ] || tail -n 5 "$WORK"/out.*
finish
