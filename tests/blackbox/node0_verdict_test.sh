#!/usr/bin/env bash
# A round after the first starts at once under etcd: its members wait for its node 0's verdict
# (DESIGN §5). Its node 0, a spare seated after a long wait, reads its checks again, finds them
# failing and leaves the round before its verdict, ending it as one ended to regroup (the
# round's abort): its members go on to the next round at once, where a newcomer takes its place. Before, they waited for its verdict until its lease ended, which a node
# waiting benched keeps: up to --rdzv-timeout and --node-timeout (the fault campaigns' etcd 309:
# 70 s, while the job ran rounds seating the members that waited).
# usage: node0_verdict_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
cluster_test_folders nv
HOSTS=7  # 0-3: the launchers; 4-6: etcd's members
MARK="aml-node0-verdict-$$"
etcd_test_cleanup_at_exit
netns_up "$CLUSTER" "$NET" $HOSTS || { finish; exit; }
check "etcd: a three-member cluster starts on hosts 4-6" bash "$ETCD" up "$NET" "$WORK" 4 5 6
ENDPOINTS=$(bash "$ETCD" endpoints 4 5 6)

write_worker_until_done
start() {  # start HOST: its launcher, in the background; its check fails while $W/sick.HOST is
  (
    bash "$CLUSTER" exec "$NET" "$1" env -i PATH=/usr/bin:/bin W="$WORK" HOST_ID="$1" \
      AML_TEST_MARK="$MARK" "$BIN" --nnodes 2:2 --node-timeout 10 --rdzv-timeout 60 \
      --max-restarts 1 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "nv-$$" \
      --health-checks command --health-command 'test ! -e "$W/sick.$HOST_ID" || { echo sick; exit 1; }' \
      --events-file "$WORK/events.$1" -- "$WORK/worker.sh" >"$WORK/out.$1" 2>&1
    write_status "$WORK/status.$1" $?
  ) 2>/dev/null &
}
pids_of() {
  for pid in $(grep -l -a "AML_TEST_MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
    grep -q -a "HOST_ID=$1\b" "/proc/$pid/environ" 2>/dev/null && echo "$pid"
  done
}
# Its launcher's processes alone: killed, they are a lost launcher, heard at once (its workers,
# killed with it, could be heard first as a failure of theirs, the launcher seated again).
launchers_of() { for p in $(pids_of "$1"); do [ "$(readlink "/proc/$p/exe")" = "$BIN" ] && echo "$p"; done; }
said() { for _ in $(seq 200); do grep -q "$2" "$WORK/out.$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
formed() {  # formed HOST ROUND: its events say the round formed on it
  grep -q "\"kind\":\"rendezvous_formed\".*\"round\":$2," "$WORK/events.$1" 2>/dev/null
}

start 0
sleep 1  # host 0 first: node 0
start 1
wait_file "$WORK/ran.0.0" 20 && wait_file "$WORK/ran.1.0" 5
start 2
check "round 0 runs on hosts 0 (node 0) and 1; host 2 waits as a hot spare" said 2 "hot spare"
sleep 6  # the spare's checks, read as it counted in, are stale by its seat (over 5 s old)
# Node 0's launcher killed: host 1 gives round 1's seats, node 0's to the spare, turned sick.
touch "$WORK/sick.2"
kill -KILL $(launchers_of 0)
check "host 2, seated as round 1's node 0, fails its check and leaves the round before its verdict" \
  said 2 "this node is benched (failed its health check"
start 3
check "host 1 hears that round 1 ended before its node 0's verdict, and goes on" \
  said 1 "round 1.s node 0 did not say its verdict; the round ended: .*its health check failed"
for _ in $(seq 300); do formed 1 2 && formed 3 2 && break; sleep 0.1; done
check "round 2 runs on host 1 and the newcomer within 30 s (not after host 2's lease: it lives)" \
  bash -c "$(declare -f formed); WORK='$WORK'; formed 1 2 && formed 3 2"
touch "$WORK/done"
got=""
for h in 1 2 3; do wait_file "$WORK/status.$h" 30; got="$got$(cat "$WORK/status.$h" 2>/dev/null) "; done
check "the job ends 0 on hosts 1-3, host 2 benched ($got)" [ "$got" = "0 0 0 " ]
[ "$failed" = 0 ] || tail -n 8 "$WORK"/out.*
finish
