#!/usr/bin/env bash
# A launcher that dies while etcd is down is heard at once on the round's tripwire (DESIGN §5),
# not when etcd answers again. Every etcd member is killed while a round runs on three hosts,
# then one host's launcher: the two others must end the round within seconds, naming that node
# as the first failure, well before --node-timeout would end it as the rendezvous lost. Before,
# a running launcher waited out --node-timeout in each call that opened a watch again (etcd's
# members refusing every connection), and heard nothing meanwhile: it ended the round 19 s
# later for the rendezvous lost, the dead node unnamed. Once etcd is back, the two survivors
# form the next round and the job ends well.
# usage: tripwire_etcd_down_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
cluster_test_folders td
HOSTS=6  # 0-2: etcd's members; 3-5: the launchers
NT=10    # --node-timeout: the survivors must hear the loss long before it
J=td
MARK="aml-tripwire-etcd-$$"
etcd_test_cleanup_at_exit
etcd_hosts_up || { finish; exit; }

write_worker_until_done
CMD=("$WORK/worker.sh")
for h in 3 4 5; do
  start $J $h no_env --nnodes 2:3 --node-timeout $NT --rdzv-timeout 60 --max-restarts 1 \
    --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "td-$$" --rdzv-last-call 1 \
    --events-file "$WORK/events.$h"
done
for h in 3 4 5; do wait_file "$WORK/ran.$h.0" 30; done
check "round 0 runs on the three hosts" bash -c "ls '$WORK'/ran.*.0 | wc -l | grep -qx 3"
for m in 0 1 2; do bash "$ETCD" kill "$WORK" $m; done
sleep 1  # the launchers' streams have lost their members
pids=$(host_pids $J 5)
killed=$(date +%s%N)
kill -KILL $pids 2>/dev/null
ended_both() {  # hosts 3 and 4 ended round 0
  for _ in $(seq 300); do
    [ "$(cat "$WORK"/events.3 "$WORK"/events.4 | grep -c '"kind":"round_ended"')" = 2 ] && return 0
    sleep 0.02
  done
  return 1
}
ended_both
took=$((($(date +%s%N) - killed) / 1000000))
check "etcd down, host 5's launcher killed: hosts 3 and 4 end round 0 within 6 s (${took} ms; --node-timeout ${NT} s)" \
  [ "$took" -lt 6000 ]
check "... naming the node that died, not the rendezvous lost" \
  bash -c "[ \$(grep -h '\"kind\":\"round_ended\"' '$WORK'/events.3 '$WORK'/events.4 | grep -c 'it died') = 2 ]"
check "etcd up again on its members' data" bash "$ETCD" up "$NET" "$WORK" 0 1 2
for h in 3 4; do wait_file "$WORK/ran.$h.1" 30; done
check "round 1 runs on hosts 3 and 4" bash -c "ls '$WORK'/ran.*.1 | wc -l | grep -qx 2"
touch "$WORK/done"
got=""
for h in 3 4; do got="$got$(wait_status $J $h 30) "; done
check "the job ends 0 on both survivors ($got)" [ "$got" = "0 0 " ]
[ "$failed" = 0 ] || { show $J; cat "$WORK"/events.*; }
finish
