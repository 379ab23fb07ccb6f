#!/usr/bin/env bash
# A launcher counted twice in one round is seated once (DESIGN §5): a hot spare, counted in for
# the next round, finds etcd out of reach and comes back with its lease (no lease ends without
# a leader), counting in again: a second slot. Node 0's launcher was killed meanwhile; once
# etcd is back and node 0's lease has ended, host 1 (paused until then: back at once, it would
# seat node 0, its lease alive) gives the next round's seats. Before, the
# spare joined that round once per slot: one slot seated it (the seats' record made it the
# round's node 0), the other called it a spare, and that was the answer it read. It waited as a
# spare, and host 1 for its node 0's verdict, until --rdzv-timeout and --node-timeout had
# passed (found by hand, 2 runs of 3, while CI's launcher.late_seat failure was looked into).
# usage: counted_twice_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
cluster_test_folders ct
HOSTS=6  # 0-2: etcd's members; 3-5: the launchers (node 0, host 1, the spare)
N0=3 H1=4 SPARE=5
N0_NT=3      # --node-timeout: a lease's TTL; a wait on etcd fails after it. Node 0's lease
H1_NT=12     # ends soon after etcd's return; host 1's outlives its pause across that return
SPARE_NT=20  # the spare's: its lease outlives the pause below (the seats given meanwhile)
MARK="aml-twice-$$"
etcd_test_cleanup_at_exit
etcd_hosts_up || { finish; exit; }

write_worker_until_done
start() {  # start HOST NODE_TIMEOUT: its launcher, in the background
  (
    bash "$CLUSTER" exec "$NET" "$1" env -i PATH=/usr/bin:/bin W="$WORK" HOST_ID="$1" \
      AML_TEST_MARK="$MARK" "$BIN" --nnodes 2:2 --node-timeout "$2" --rdzv-timeout 60 \
      --max-restarts 1 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "ct-$$" \
      --events-file "$WORK/events.$1" -- "$WORK/worker.sh" >"$WORK/out.$1" 2>&1
    write_status "$WORK/status.$1" $?
  ) 2>/dev/null &
}
launchers_of() {
  for pid in $(grep -l -a "AML_TEST_MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
    grep -q -a "HOST_ID=$1\b" "/proc/$pid/environ" 2>/dev/null &&
      [ "$(readlink "/proc/$pid/exe")" = "$BIN" ] && echo "$pid"
  done
}
said() {  # said HOST TEXT [SECONDS]: its launcher said it (within 15 s)
  for _ in $(seq $((${3:-15} * 20))); do grep -q "$2" "$WORK/out.$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}

etcdctl_on() { ETCDCTL_API=3 bash "$CLUSTER" exec "$NET" 0 etcdctl --endpoints "$ENDPOINTS" "$@"; }
# The slots the spare's launcher took in round 1: the count's versions that name its address
# (a watch from the first revision prints the key's history, then waits: cut short).
spare_slots() {
  timeout 2 env ETCDCTL_API=3 bash "$CLUSTER" exec "$NET" 0 etcdctl --endpoints "$ENDPOINTS" \
    watch --rev 1 --prefix "/aml-launch/ct-$$/" 2>/dev/null |
    awk '/\/aml\/elastic\/1\/count$/ { getline v; if (v ~ /"addr":"10\.77\.0\.6"/) n++ } END { print n + 0 }'
}

start $N0 $N0_NT
sleep 1  # node 0 first
start $H1 $H1_NT
wait_file "$WORK/ran.$N0.0" 20 && wait_file "$WORK/ran.$H1.0" 5
start $SPARE $SPARE_NT
check "round 0 runs on node 0 and host 1; the spare waits as a hot spare" said $SPARE "hot spare"
for m in 0 1 2; do bash "$ETCD" kill "$WORK" $m; done
kill -KILL $(launchers_of $N0)
check "etcd down, node 0's launcher killed: host 1 finds etcd out of reach and comes back" \
  said $H1 "it comes back and waits for a seat" 30
check "... and so does the spare (past its --node-timeout $SPARE_NT s)" \
  said $SPARE "it comes back and waits for a seat" 40
# Host 1 is paused as etcd comes back, until node 0's lease has ended (--node-timeout after
# etcd's return: nobody heard its death, etcd was down): back, host 1 writes round 0's end (the
# rendezvous lost, which etcd could not take) and gives round 1's seats at once, without node 0.
kill -STOP $(launchers_of $H1)
check "etcd up again on its members' data (every lease renewed)" bash "$ETCD" up "$NET" "$WORK" 0 1 2
back=$(date +%s)
# Back, the spare counts in for round 1 again: a second slot there (etcd keeps the count's
# history: each slot a version). Then it is paused, so that host 1 alone gives round 1's
# seats; continued once they are given, it reads its place.
until_spare_slots() {  # until_spare_slots N: within 10 s
  for _ in $(seq 50); do [ "$(spare_slots)" = "$1" ] && return 0; sleep 0.2; done
  return 1
}
check "the spare counts in for round 1 twice" until_spare_slots 2
kill -STOP $(launchers_of $SPARE)
left=$((back + N0_NT * 2 - $(date +%s)))
[ $left -le 0 ] || sleep $left  # node 0's lease has ended; host 1's has not
kill -CONT $(launchers_of $H1)
seats_given() {  # round 1's seats' record is in etcd (within 20 s)
  for _ in $(seq 100); do
    etcdctl_on get --prefix "/aml-launch/ct-$$/" --keys-only 2>/dev/null | grep -q "/elastic/1/seats$" && return 0
    sleep 0.2
  done
  return 1
}
check "the spare paused: host 1, continued once node 0's lease ended, gives round 1's seats" seats_given
kill -CONT $(launchers_of $SPARE)
wait_file "$WORK/ran.$H1.1" 20 && wait_file "$WORK/ran.$SPARE.1" 5
check "round 1 runs on host 1 and the spare" bash -c "[ -e '$WORK/ran.$H1.1' ] && [ -e '$WORK/ran.$SPARE.1' ]"
check "... the spare seated once: never told it is round 1's spare" \
  bash -c "! grep -q 'round 1 has the most nodes' '$WORK/out.$SPARE'"
touch "$WORK/done"
got=""
for h in $H1 $SPARE; do wait_file "$WORK/status.$h" 30; got="$got$(cat "$WORK/status.$h" 2>/dev/null) "; done
check "the job ends 0 on host 1 and the spare ($got)" [ "$got" = "0 0 " ]
[ "$failed" = 0 ] || { tail -n 12 "$WORK"/out.*; echo "the spare's slots in round 1: $(spare_slots)"; }
finish
