#!/usr/bin/env bash
# A round's end that etcd could not take is written once etcd answers (DESIGN §5): every etcd
# member is down for longer than --node-timeout while a round runs, and a worker fails
# meanwhile. Its launcher cannot report the failure, and every launcher, etcd silent past
# --node-timeout, ends the round for the rendezvous lost: none of them can write the round's
# end. Before, once etcd was back they all counted in for the next round and waited for a seat
# until --rdzv-timeout: a round is claimed only after the last one's end is in etcd, and no
# lease ended (etcd ends none without a leader). Now each writes the end it kept at its next
# join, and the next round forms as soon as etcd answers. The failed worker is node 0's: its
# members hear its verdict on their tripwire (etcd cannot take it), and every launcher names
# that worker, not node 0's store's closing taken for its death.
# usage: abort_after_etcd_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
cluster_test_folders ae
HOSTS=6  # 0-2: etcd's members; 3-5: the launchers
NT=6     # --node-timeout; etcd stays down for longer
MARK="aml-abort-etcd-$$"
etcd_test_cleanup_at_exit
etcd_hosts_up || { finish; exit; }

# A worker exits 1 once its fail file for this round exists; all end well once "done" does.
cat >"$WORK/worker.sh" <<'EOS'
#!/bin/sh
echo "$GROUP_RANK" >"$W/ran.$HOST_ID.$TORCHELASTIC_RESTART_COUNT"
until [ -e "$W/done" ]; do
  [ -e "$W/fail.$HOST_ID.$TORCHELASTIC_RESTART_COUNT" ] && exit 1
  sleep 0.05
done
EOS
chmod +x "$WORK/worker.sh"
start() {  # start HOST: its launcher, in the background
  (
    bash "$CLUSTER" exec "$NET" "$1" env -i PATH=/usr/bin:/bin W="$WORK" HOST_ID="$1" \
      AML_TEST_MARK="$MARK" "$BIN" --nnodes 2:3 --node-timeout $NT --rdzv-timeout 60 \
      --max-restarts 1 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "ae-$$" \
      --rdzv-last-call 1 --events-file "$WORK/events.$1" -- "$WORK/worker.sh" \
      >"$WORK/out.$1" 2>&1
    write_status "$WORK/status.$1" $?
  ) 2>/dev/null &
}

for h in 3 4 5; do start $h; done
for h in 3 4 5; do wait_file "$WORK/ran.$h.0" 30; done
check "round 0 runs on the three hosts" bash -c "ls '$WORK'/ran.*.0 | wc -l | grep -qx 3"
node0=$(grep -lx 0 "$WORK"/ran.*.0 | head -1 | sed 's/.*ran\.\([0-9]*\)\.0$/\1/')
for m in 0 1 2; do bash "$ETCD" kill "$WORK" $m; done
touch "$WORK/fail.$node0.0"
ended_all() {  # every launcher ended round 0 (within --node-timeout and its calls' wait)
  for _ in $(seq $((NT * 3 * 10))); do
    [ "$(cat "$WORK"/events.* | grep -c '"kind":"round_ended"')" = 3 ] && return 0
    sleep 0.1
  done
  return 1
}
check "etcd down, node 0's worker failed (host $node0): every launcher ends round 0" ended_all
named=$(/usr/bin/python3 -c '
import json, sys
ends = [json.loads(line) for path in sys.argv[1:] for line in open(path)]
print(sum(1 for e in ends if e["kind"] == "round_ended" and e["round"] == 0 and
          (f := e["details"]["first_failure"] or {}).get("node_rank") == 0 and
          f.get("pid", 0) > 0 and f.get("exit_code") == 1))' "$WORK"/events.*)
check "... each naming that worker's exit 1 as round 0's first failure ($named of 3)" [ "$named" = 3 ]
sleep 2  # they wait for etcd to answer
check "etcd up again on its members' data (every lease renewed)" bash "$ETCD" up "$NET" "$WORK" 0 1 2
back=$(date +%s%N)
for h in 3 4 5; do wait_file "$WORK/ran.$h.1" 30; done
took=$((($(date +%s%N) - back) / 1000000))
check "round 1 runs on the three hosts" bash -c "ls '$WORK'/ran.*.1 | wc -l | grep -qx 3"
check "... within 15 s of etcd's return (${took} ms), not at --rdzv-timeout" [ "$took" -lt 15000 ]
check "... and a launcher wrote round 0's end that etcd could not take" \
  grep -q "which etcd could not take as it came, is written now" "$WORK"/out.3 "$WORK"/out.4 "$WORK"/out.5
touch "$WORK/done"
got=""
for h in 3 4 5; do wait_file "$WORK/status.$h" 30; got="$got$(cat "$WORK/status.$h" 2>/dev/null) "; done
check "the job ends 0 on the three hosts ($got)" [ "$got" = "0 0 0 " ]
[ "$failed" = 0 ] || { tail -n 12 "$WORK"/out.*; grep -h round_ended "$WORK"/events.*; }
finish
