#!/usr/bin/env bash
# A live launcher keeps its etcd lease through faults (DESIGN §5: its lease's keeper, a thread of
# its own): a real three-member etcd on network-namespace hosts of its own, a 5-node job with
# --node-timeout 3 (a 3 s lease) that fails and restarts, round after round, under
#   1. both cores hogged at the launchers' priority;
#   2. etcd's leader frozen for 1 s (SIGSTOP, then SIGCONT) in every round, and a leader change;
#   3. 200 ms more on every exchange with etcd, each way (a delaying proxy on each member's host:
#      this kernel has no netem);
#   4. workers that take two TTLs to leave after SIGTERM (a checkpoint saved on TERM).
# In each, every round forms with all 5 nodes, the job ends 0 everywhere, and no launcher is
# named lost. Then, with the cores hogged, a launcher SIGKILLed is still heard at once.
# usage: etcd_lease_faults_test.sh AML_LAUNCH   (AML_FAULT_ROUNDS: rounds per fault, 10)
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
ROUNDS=${AML_FAULT_ROUNDS:-10}
WORK=$(mktemp -d)
export TMPDIR="$WORK"
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
ETCD="$(dirname "$0")/../cluster/etcd_cluster.sh"
NET="lf$$"
HOSTS=8  # 0-2: etcd's members; 3-7: launchers
FIRST_HOST=3
MARK="aml-lease-$$"
hogs=()
stop_hogs() { [ ${#hogs[@]} = 0 ] || kill "${hogs[@]}" 2>/dev/null; wait "${hogs[@]}" 2>/dev/null; hogs=(); }
trap 'stop_hogs; kill_marked_processes "$MARK"; bash "$ETCD" cont "$WORK"; bash "$ETCD" down "$WORK"
      bash "$CLUSTER" down "$NET" $HOSTS; [ -n "${AML_TEST_KEEP:-}" ] || rm -rf "$WORK"' EXIT
etcd_hosts_up || { finish; exit; }

# Each round: rank 0 fails after a moment, until the last round, whose workers all end well.
# The others wait for the stop; on TERM a worker takes $LINGER s to leave.
cat >"$WORK/worker.sh" <<'EOS'
#!/bin/sh
trap 'sleep $LINGER; exit 143' TERM
r=$TORCHELASTIC_RESTART_COUNT
[ "$LOCAL_RANK" = 0 ] && echo "$GROUP_RANK $GROUP_WORLD_SIZE" >"$W/$JOB.rank.$HOST_ID.$r"
sleep 0.3
[ "$r" = "$((ROUNDS - 1))" ] && exit 0
[ "$RANK" = 0 ] && exit 1
while :; do sleep 0.05; done
EOS
chmod +x "$WORK/worker.sh"
CMD=("$WORK/worker.sh")

# run_job JOB ENDPOINTS LINGER: the 5-node job through $ROUNDS rounds; then its checks.
run_job() {
  local job=$1 endpoints=$2 linger=$3 what=$4 h statuses="" lost
  for h in 3 4 5 6 7; do
    env_of() { echo ROUNDS="$ROUNDS" LINGER="$linger"; }
    start "$job" $h env_of --nnodes 5 --node-rank $((h - 3)) --rdzv-backend etcd \
      --rdzv-endpoint "$endpoints" --rdzv-id "$job-$$" --nproc-per-node 1 --node-timeout 3 \
      --rdzv-timeout 30 --max-restarts $((ROUNDS - 1)) --term-timeout 20
  done
  for h in 3 4 5 6 7; do statuses="$statuses$(wait_status "$job" $h 600) "; done
  local rounds  # each launcher says each round it joined (a worker stopped at once may not write)
  rounds=$(cat "$WORK/$job".out.* 2>/dev/null | grep -c "all 5 nodes joined run round")
  check "$what: $ROUNDS rounds of 5 nodes, and the job ends 0 everywhere ($statuses; $rounds nodes' rounds)" \
    bash -c "[ '$statuses' = '0 0 0 0 0 ' ] && [ $rounds = $((ROUNDS * 5)) ]" || show "$job"
  lost=$(grep -l -E "lease|was lost|silent|expired" "$WORK/$job".out.* 2>/dev/null | tr '\n' ' ')
  check "$what: no live launcher named lost (${lost:-none})" [ -z "$lost" ] || show "$job"
}

# 1. Both cores hogged at the launchers' priority (nice 0, as they are).
for _ in 1 2; do (while :; do :; done) & hogs+=($!); done
run_job hog "$ENDPOINTS" 0 "both cores hogged"

# ... and a launcher SIGKILLed there is heard at once, by its closed connection.
J=kill
ROUNDS=2  # the job waits in round 0 (rank 0 does not fail before the kill: it is killed)
cat >"$WORK/wait.sh" <<'EOS'
#!/bin/sh
echo up >"$W/$JOB.up.$HOST_ID"
while :; do sleep 0.05; done
EOS
chmod +x "$WORK/wait.sh"
CMD=("$WORK/wait.sh")
for h in 3 4 5 6 7; do
  start $J $h no_env --nnodes 5 --node-rank $((h - 3)) --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" \
    --rdzv-id "$J-$$" --nproc-per-node 1 --node-timeout 3 --rdzv-timeout 30
done
for h in 3 4 5 6 7; do wait_file "$WORK/$J.up.$h" 30; done
victims=$(host_pids $J 7)
t0=$(date +%s%N)
kill -KILL $victims 2>/dev/null
s3=$(wait_status $J 3 30)
ms=$((($(date +%s%N) - t0) / 1000000))
check "cores hogged: node 4's launcher SIGKILLed, node 0 stops ($s3 after $ms ms), hearing its closed connection, not its lease" \
  bash -c "[ -n '$s3' ] && [ '$s3' != 0 ] && grep -q \"node 4 .*closed\" '$WORK/$J.out.3' && ! grep -q 'lease ended' '$WORK/$J.out.3'" ||
  show $J
stop_hogs
ROUNDS=${AML_FAULT_ROUNDS:-10}
CMD=("$WORK/worker.sh")

# 2. etcd's leader frozen for 1 s again and again, and once moved to another member.
(
  moved=0
  while :; do
    leader=$(bash "$ETCD" leader "$NET" 0 1 2) || { sleep 0.2; continue; }
    if [ $moved = 0 ]; then  # first, a leader change
      to=$(((leader + 1) % 3))
      id=$(ETCDCTL_API=3 bash "$CLUSTER" exec "$NET" "$to" etcdctl --endpoints "$(bash "$CLUSTER" addr "$to"):2379" \
        endpoint status -w simple 2>/dev/null | cut -d, -f2 | tr -d ' ')
      ETCDCTL_API=3 bash "$CLUSTER" exec "$NET" "$leader" etcdctl --endpoints "$(bash "$CLUSTER" addr "$leader"):2379" \
        move-leader "$id" >"$WORK/move-leader.log" 2>&1 && moved=1
      continue
    fi
    kill -STOP "$(cat "$WORK/etcd.$leader/pid")"
    sleep 1
    kill -CONT "$(cat "$WORK/etcd.$leader/pid")"
    sleep 2
  done
) &
freezer=$!
run_job freeze "$ENDPOINTS" 0 "etcd's leader frozen 1 s every 3 s, and moved"
kill $freezer 2>/dev/null
wait $freezer 2>/dev/null
bash "$ETCD" cont "$WORK"
check "etcd's leader was moved once" grep -q "Leadership transferred" "$WORK/move-leader.log" ||
  cat "$WORK/move-leader.log"

# 3. 200 ms more each way on every exchange with etcd: a proxy on each member's host.
proxies=""
for i in 0 1 2; do
  a=$(bash "$CLUSTER" addr $i)
  bash "$CLUSTER" exec "$NET" $i /usr/bin/python3 "$(dirname "$0")/delay_proxy.py" "$a" 2479 "$a" 2379 0.2 \
    >"$WORK/proxy.$i.log" 2>&1 &
  hogs+=($!)
  proxies="$proxies${proxies:+,}$a:2479"
done
sleep 0.5
run_job delay "$proxies" 0 "200 ms added each way to etcd"
stop_hogs

# 4. Workers that take two TTLs (6 s) to leave after SIGTERM, at every restart.
ROUNDS=$(((${AML_FAULT_ROUNDS:-10} + 1) / 2))
run_job linger "$ENDPOINTS" 6 "workers take 6 s (two TTLs) to leave after SIGTERM"
finish
