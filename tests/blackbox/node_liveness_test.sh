#!/usr/bin/env bash
# Death and silence are different (DESIGN §5), three nodes on a cluster of network namespaces
# (tests/cluster/netns_cluster.sh), two workers each: a launcher that dies is noticed by every
# node within 1 s (its connection to the store closes); one that is only silent (SIGSTOP: a
# paused VM; its link down: cut off) is lost only after --node-timeout, and a shorter pause is
# survived as if nothing happened.
# usage: node_liveness_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
NET="lv$$"
kill_all() { kill -KILL $(grep -l "MARK=aml-liveness-$$-" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3) 2>/dev/null; }
kill_marked() { kill -KILL $(grep -l "MARK=aml-liveness-$$-$1-" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3) 2>/dev/null; }
trap 'kill_all; bash "$CLUSTER" down "$NET" 3; rm -rf "$WORK"' EXIT
bash "$CLUSTER" up "$NET" 3
MASTER=$(bash "$CLUSTER" addr 0)
py=/usr/bin/python3
port() { $py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# job NAME NODE_TIMEOUT WORKER [UP]: 3 nodes; $pids[n] each node's launcher (the pid started);
# until UP workers run (6). FAILPOINT_1: node 1's AML_LAUNCH_TEST_FAILPOINT; ELASTIC: --nnodes
# 2:3 instead of fixed node ranks (node 0 is the store's host, at the endpoint).
job() {
  local name=$1 timeout=$2 worker=$3 up=${4:-6} p n how
  p=$(port)
  rm -f "$WORK"/up.*
  for n in 0 1 2; do
    how=(--nnodes 3 --node-rank $n --master-addr "$MASTER" --master-port "$p")
    [ -n "${ELASTIC:-}" ] &&
      how=(--nnodes 2:3 --rdzv-endpoint "$MASTER:$p" --rdzv-id "lv$$" --rdzv-last-call 2 --max-restarts 1)
    bash "$CLUSTER" exec "$NET" $n env -i PATH=/usr/bin:/bin W="$WORK" \
      MARK="aml-liveness-$$-$name-$n" \
      $([ $n = 1 ] && [ -n "${FAILPOINT_1:-}" ] && echo "AML_LAUNCH_TEST_FAILPOINT=$FAILPOINT_1") \
      "$BIN" "${how[@]}" --nproc-per-node 2 \
      --rdzv-timeout 20 --node-timeout "$timeout" -- sh -c "$worker" \
      >"$WORK/$name.$n.out" 2>"$WORK/$name.$n.err" &
    pids[n]=$!
  done
  workers_up "$up"
}
# gone_within S PID...: whether every PID ended within S seconds.
gone_within() {
  local seconds=$1 pid
  shift
  for _ in $(seq $((seconds * 20))); do
    for pid; do kill -0 "$pid" 2>/dev/null && { sleep 0.05; continue 2; }; done
    return 0
  done
  return 1
}
# node_processes NAME N: every process of node N (its launcher's two, its workers, theirs).
node_processes() { grep -l -a "MARK=aml-liveness-$$-$1-$2\b" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
signal_node() { kill -"$1" $(node_processes "$2" "$3") 2>/dev/null; }
worker_for() {  # a worker that runs SECONDS, with its rank's "up" file
  echo "touch \"\$W/up.\$RANK\"; exec sleep $1"
}

# --- Node 1 paused 7 s (launcher and workers, as a paused VM), --node-timeout 9: survived. Its
# watch, its sign of life, asks every 3 s: silence is counted from the store's answer, not from
# the question before it, or a pause 2 s shorter than --node-timeout could be a loss.
job pause5 9 "$(worker_for 12)"
t0=$(date +%s%N)
signal_node STOP pause5 1
sleep 7
signal_node CONT pause5 1
wait_launchers 3
check "node 1 paused 7 s, --node-timeout 9: every node exits 0 ($s0 $s1 $s2), nobody speaks of a lost node" \
  bash -c "[ '$s0 $s1 $s2' = '0 0 0' ] && ! grep -q 'lost' '$WORK'/pause5.*.err"

# --- Node 1 paused, --node-timeout 4: lost after about 4 s; every node names node 1.
job pause12 4 "$(worker_for 60)"
t0=$(date +%s%N)
signal_node STOP pause12 1
wait ${pids[0]}; s0=$?; ms0=$((($(date +%s%N) - t0) / 1000000))
signal_node CONT pause12 1  # (the issue's 12 s: no need to wait longer once node 0 gave up)
wait ${pids[1]}; s1=$?
wait ${pids[2]}; s2=$?
check "node 1 paused, --node-timeout 4: node 0 gives up after ${ms0} ms (4 s to 8 s)" \
  bash -c "[ $ms0 -ge 3900 ] && [ $ms0 -lt 8000 ]"
check "node 1 paused, --node-timeout 4: every node exits with the same status ($s0 $s1 $s2)" \
  bash -c "[ $s0 != 0 ] && [ $s0 = $s1 ] && [ $s1 = $s2 ]"
check "node 1 paused: nodes 0 and 2 name node 1, silent for the node timeout" \
  bash -c "grep -q 'node 1 (.*): its launcher was lost: no heartbeat for .* (--node-timeout 4 s)' '$WORK/pause12.0.err' &&
           grep -q 'node 1 (.*): its launcher was lost' '$WORK/pause12.2.err'" ||
  cat "$WORK"/pause12.[02].err
check "node 1 paused: node 1 itself, when it runs again, names node 1 too (not node 0)" \
  bash -c "grep -q 'node 1 (.*): its launcher was lost' '$WORK/pause12.1.err' && ! grep -q 'node 0 (.*): its launcher was lost' '$WORK/pause12.1.err'" ||
  cat "$WORK/pause12.1.err"

# --- Node 2's launcher dies (both of its processes SIGKILLed, as a lost host): the others stop
# within 1 s, naming node 2, with a --node-timeout of 60 s.
job die2 60 "$(worker_for 60)"
t0=$(date +%s%N)
# The supervisor first: the other way round it could hear of its guardian's death in between.
kill -KILL $(pgrep -P ${pids[2]} -x aml-launch) ${pids[2]}
wait ${pids[0]}; s0=$?; ms0=$((($(date +%s%N) - t0) / 1000000))
wait ${pids[1]}; s1=$?; ms1=$((($(date +%s%N) - t0) / 1000000))
check "node 2 died: nodes 0 and 1 stop within 1 s (${ms0} ms, ${ms1} ms; --node-timeout 60)" \
  bash -c "[ $ms0 -lt 1000 ] && [ $ms1 -lt 1000 ] && [ $s0 = 1 ] && [ $s1 = 1 ]"
check "node 2 died: both name it" bash -c \
  "grep -q 'node 2 (.*): its launcher was lost: it died' '$WORK/die2.0.err' && grep -q 'node 2 (.*): its launcher was lost: it died' '$WORK/die2.1.err'" ||
  cat "$WORK"/die2.*.err
sleep 0.3
check "node 2 died: nothing of node 2 is left (its workers went with it)" [ -z "$(node_processes die2 2)" ]

# --- Node 0's launcher dies: its store goes with it; the others stop within 1 s naming node 0.
job die0 60 "$(worker_for 60)"
t0=$(date +%s%N)
kill -KILL $(pgrep -P ${pids[0]} -x aml-launch) ${pids[0]}
wait ${pids[1]}; s1=$?; ms1=$((($(date +%s%N) - t0) / 1000000))
wait ${pids[2]}; s2=$?; ms2=$((($(date +%s%N) - t0) / 1000000))
check "node 0 died: nodes 1 and 2 stop within 1 s (${ms1} ms, ${ms2} ms), naming node 0" \
  bash -c "[ $ms1 -lt 1000 ] && [ $ms2 -lt 1000 ] && grep -q 'node 0 (.*): its launcher was lost' '$WORK/die0.1.err'"

# --- Node 1's launcher killed as its round begins: it read the verdict, its workers have not
# started (a failpoint: the moment a lost host hit in a fault campaign). Its will stands from
# its entry on, so nodes 0 and 2 stop within 2 s, naming node 1, with a --node-timeout of 60 s.
# (The will was set after the verdict: node 0 ran the round without node 1 for good, since a
# closed watch is no silent one.) Then the same in an elastic job, whose members' "gone" will
# stood until their entry: node 0 names node 1 and runs a round of the two left.
FAILPOINT_1="round-agreed:$WORK/agreed.fired" job agreed 60 "$(worker_for 60)" 4
wait_file "$WORK/agreed.fired" 10
t0=$(date +%s%N)
gone_within 10 ${pids[0]} ${pids[2]}
ms=$((($(date +%s%N) - t0) / 1000000))
kill_marked agreed
wait ${pids[0]}; s0=$?
wait ${pids[2]}; s2=$?
check "node 1 killed as it read the round's verdict: nodes 0 and 2 stop within 2 s ($ms ms; --node-timeout 60), exit 1 ($s0 $s2)" \
  bash -c "[ $ms -lt 2000 ] && [ '$s0 $s2' = '1 1' ]" || cat "$WORK"/agreed.[02].err
check "node 1 killed as it read the round's verdict: both name it, dead" bash -c \
  "grep -q 'node 1 (.*): its launcher was lost: it died' '$WORK/agreed.0.err' && grep -q 'node 1 (.*): its launcher was lost: it died' '$WORK/agreed.2.err'" ||
  cat "$WORK"/agreed.[02].err
wait ${pids[1]}

ELASTIC=1 FAILPOINT_1="round-agreed:$WORK/agreed-elastic.fired" \
  job agreed_elastic 60 "$(worker_for 60)" 4
wait_file "$WORK/agreed-elastic.fired" 10
t0=$(date +%s%N)
for _ in $(seq 200); do
  grep -q "elastic round 1: 2 nodes" "$WORK/agreed_elastic.0.err" && break
  sleep 0.05
done
ms=$((($(date +%s%N) - t0) / 1000000))
check "elastic, a member killed as it read the round's verdict: node 0 runs a round of the two left within 4 s ($ms ms; --node-timeout 60), naming it dead" \
  bash -c "[ $ms -lt 4000 ] && grep -q 'elastic round 1: 2 nodes' '$WORK/agreed_elastic.0.err' &&
           grep -q 'node [12] (.*): its launcher was lost: it died' '$WORK/agreed_elastic.0.err'" ||
  cat "$WORK"/agreed_elastic.*.err
kill_marked agreed_elastic
wait ${pids[0]} ${pids[1]} ${pids[2]}

# --- The guardian alone killed on node 1 (SIGKILL of the pid started, as a scheduler sends):
# node 1's supervisor stops its workers and tells the others at once.
job guard1 60 "$(worker_for 60)"
t0=$(date +%s%N)
kill -KILL ${pids[1]}
wait ${pids[0]}; s0=$?; ms0=$((($(date +%s%N) - t0) / 1000000))
wait ${pids[2]}; s2=$?
check "node 1's launcher SIGKILLed: node 0 stops within 1 s (${ms0} ms), 137 everywhere ($s0 $s2)" \
  bash -c "[ $ms0 -lt 1000 ] && [ '$s0 $s2' = '137 137' ]"
check "node 1's launcher SIGKILLed: node 0 names node 1's SIGKILL" \
  grep -q "the job was stopped by SIGKILL sent to node 1 (.*)'s launcher" "$WORK/guard1.0.err"

# --- Node 1 cut off (its link down), --node-timeout 4: nodes 0 and 2 name node 1 after about
# 4 s; node 1, whose heartbeats nobody acknowledges, names node 0 after about as long. None
# is left.
job cut 4 "$(worker_for 60)"
t0=$(date +%s%N)
ip -n "$NET-br" link set "$NET-v1" down
wait_launchers 3
check "node 1 cut off, --node-timeout 4: nodes 0 and 2 stop after ${ms0} ms and ${ms2} ms (4 s to 9 s), naming node 1" \
  bash -c "[ $ms0 -ge 3900 ] && [ $ms0 -lt 9000 ] && [ $ms2 -lt 9000 ] && [ '$s0 $s2' = '1 1' ] &&
           grep -q 'node 1 (.*): its launcher was lost: no heartbeat for over 4 s' '$WORK/cut.0.err' &&
           grep -q 'node 1 (.*): its launcher was lost: no heartbeat for over 4 s' '$WORK/cut.2.err'" ||
  cat "$WORK"/cut.[02].err
check "node 1 cut off: it stops too after ${ms1} ms (4 s to 12 s), exit $s1, naming node 0 (unreachable)" \
  bash -c "[ $ms1 -ge 3900 ] && [ $ms1 -lt 12000 ] && [ $s1 = 1 ] &&
           grep -q 'node 0 (.*): its launcher was lost' '$WORK/cut.1.err'" ||
  cat "$WORK/cut.1.err"
sleep 0.3
check "node 1 cut off: nothing of the job is left" \
  [ -z "$(node_processes cut 0)$(node_processes cut 1)$(node_processes cut 2)" ]

# --- Node 0's launcher and workers frozen (SIGSTOP) while its kernel still answers TCP,
# --node-timeout 4: nodes 1 and 2 name node 0 (its store stopped answering) once it has been
# silent for --node-timeout past the time its watch's answer was due: 4 s after the freeze at
# the soonest, 4 s + a watch interval (4/3 s) + a tick at the latest; bounded at 8 s for a
# loaded machine. Node 0, once it runs again, names itself too: one verdict.
ip -n "$NET-br" link set "$NET-v1" up  # back from the cut above
job freeze0 4 "$(worker_for 60)"
t0=$(date +%s%N)
signal_node STOP freeze0 0
(sleep 15; signal_node CONT freeze0 0) &  # a launcher that never notices fails, not hangs
thaw=$!
wait ${pids[1]}; s1=$?; ms1=$((($(date +%s%N) - t0) / 1000000))
wait ${pids[2]}; s2=$?; ms2=$((($(date +%s%N) - t0) / 1000000))
signal_node CONT freeze0 0
kill $thaw 2>/dev/null
wait ${pids[0]}; s0=$?
check "node 0 frozen, --node-timeout 4: nodes 1 and 2 stop after ${ms1} ms and ${ms2} ms (4 s to 8 s), naming node 0" \
  bash -c "[ $ms1 -ge 3900 ] && [ $ms1 -le 8000 ] && [ $ms2 -le 8000 ] && [ '$s1 $s2' = '1 1' ] &&
           grep -q 'node 0 (.*): its launcher was lost: its store did not answer for over 4 s' '$WORK/freeze0.1.err' &&
           grep -q 'node 0 (.*): its launcher was lost' '$WORK/freeze0.2.err'" ||
  cat "$WORK"/freeze0.[12].err
check "node 0 frozen: node 0, running again, names node 0 too, and exits as they did ($s0)" \
  bash -c "[ $s0 = 1 ] && grep -q 'node 0 (.*): its launcher was lost' '$WORK/freeze0.0.err'" ||
  cat "$WORK/freeze0.0.err"
sleep 0.3
check "node 0 frozen: nothing of the job is left" \
  [ -z "$(node_processes freeze0 0)$(node_processes freeze0 1)$(node_processes freeze0 2)" ]

expect_status "--node-timeout that is not a number of seconds is refused" 2 "$BIN" --node-timeout soon -- true
check "--help explains --node-timeout (Azure's VM pauses)" bash -c "'$BIN' --help | grep -A3 -- --node-timeout | grep -q 'pauses VMs'"
finish
