#!/usr/bin/env bash
# Bad nodes never hold a rank (DESIGN §5, issue 62) on three network-namespace hosts
# (tests/cluster/netns_cluster.sh): an elastic job of 2:2 nodes and a hot spare.
# 1. A node failing --health-command is never seated: the spare runs, the job exits 0 without
#    it; the deciding node writes it to --bad-nodes-file; every summary lists it.
# 2. A seated node's InfiniBand port (a /sys tree of fixtures per host) goes DOWN between
#    rounds: benched; the spare takes its place.
# 3. A node whose rank fails first twice (--bench-after 2): benched; the spare takes its place.
# 4. kill -9 of a seated node's launcher alone (the process its scheduler started): a lost node,
#    not a stop of the job; the spare runs the next round and the job exits 0.
# 5. A fixed-size job (--nnodes 2) with a bad GPU (the NVML stand-in, tests/health/): every
#    node fails within 2 s naming the node, the check and its figure; no worker starts.
# 6. Four nodes and a spare: the node at node rank 3's port goes DOWN. Under etcd a round after
#    the first seats the last round's members without reading them again: that node, its checks
#    failed after its seat was given, ends the round without using a restart (--max-restarts 1
#    is spent by the failure that ended round 0) and is benched; the spare takes node rank 3.
# 7. Two nodes and no spare (2:2, --bench-after 1): node 1's rank fails first; benched, it is
#    seated again, saying so, since without it the job would end; the job finishes.
# 8. Node 0 fails its own check: it sits out and the others run. With node 0's store it still
#    serves the rendezvous and gives the seats: a spare that comes after it is seated in the
#    next round, and the workers meet at that round's node 0 (a torch Gloo allreduce); the
#    round's node 0 paused is found lost by the store's host, and the spare goes on alone; a
#    round's only member killed with no restart left ends the store's host with its failure.
# With AML_TEST_RDZV=etcd every case again with the rendezvous in a real three-member etcd on
# hosts 5-7.
# usage: health_test.sh AML_LAUNCH NVML_STAND_IN_LIBRARY
set -u
BIN=$(realpath "$1")
NVML=$(realpath "$2")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
export TMPDIR="$WORK"
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
ETCD="$(dirname "$0")/../cluster/etcd_cluster.sh"
NET="hc$$"
MARK="aml-health-$$"
BACKEND=${AML_TEST_RDZV:-c10d}
HOSTS=5
[ "$BACKEND" = etcd ] && HOSTS=8
trap 'kill_marked_processes "$MARK"; [ "$BACKEND" = etcd ] && bash "$ETCD" down "$WORK"
      bash "$CLUSTER" down "$NET" $HOSTS; [ -n "${AML_TEST_KEEP:-}" ] || rm -rf "$WORK"' EXIT
netns_up "$CLUSTER" "$NET" $HOSTS || { finish; exit; }
MASTER=$(bash "$CLUSTER" addr 0)
if [ "$BACKEND" = etcd ]; then
  check "etcd: a three-member cluster starts on hosts 5-7" bash "$ETCD" up "$NET" "$WORK" 5 6 7
  ENDPOINTS=$(bash "$ETCD" endpoints 5 6 7)
  rdzv() { echo --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "$2"; }
else
  rdzv() { echo --rdzv-endpoint "$MASTER:$1" --rdzv-id "$2"; }
fi

# Each worker writes its node rank, world size and MASTER_ADDR for its round, runs the job's
# step where it has one ($W/JOB.step), then runs until told: $W/JOB.finish ends every worker
# well; $W/JOB.fail.HOST.ROUND makes that host's worker fail.
cat >"$WORK/worker.sh" <<'WORKER'
#!/bin/sh
r=$TORCHELASTIC_RESTART_COUNT
echo "$GROUP_RANK $GROUP_WORLD_SIZE $WORLD_SIZE $RANK $MASTER_ADDR" >"$W/$JOB.rank.$HOST_ID.$r.part" &&
  mv "$W/$JOB.rank.$HOST_ID.$r.part" "$W/$JOB.rank.$HOST_ID.$r"
if [ -e "$W/$JOB.step" ]; then sh "$W/$JOB.step" || exit 4; fi
while :; do
  [ -e "$W/$JOB.fail.$HOST_ID.$r" ] && exit 3
  [ -e "$W/$JOB.finish" ] && exit 0
  sleep 0.05
done
WORKER
chmod +x "$WORK/worker.sh"
CMD=("$WORK/worker.sh")

# Each host's machine root for the checks: one InfiniBand port, ACTIVE.
port_state() {  # port_state HOST STATE PHYS
  local at="$WORK/root.$1/sys/class/infiniband/mlx5_0/ports/1"
  mkdir -p "$at/counters"
  echo "$2" >"$at/state"
  echo "$3" >"$at/phys_state"
  echo "200 Gb/sec (4X HDR)" >"$at/rate"
  echo 0 >"$at/counters/link_downed"
  echo 0 >"$at/counters/symbol_error"
}
for h in 0 1 2 3 4; do port_state $h "4: ACTIVE" "5: LinkUp"; done
root_env() { echo AML_LAUNCH_HEALTH_ROOT="$WORK/root.$host"; }  # (start's $host)
name_env() { echo AML_LAUNCH_NODE_NAME="vm-$host"; }  # the scheduler's name for the machine
gpu_env() {
  echo AML_NVML_LIBRARY="$NVML" AML_NVML_STAND_IN="$WORK/nvml.$host" CUDA_VISIBLE_DEVICES=0,1
}
wait_said() {  # wait_said FILE PATTERN SECONDS
  for _ in $(seq $(($3 * 20))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}
# The three hosts of an elastic job: 0 first (node 0), then 1, then 2 (the spare, or in case 1
# the node seated in 1's place).
start_three() {
  local job=$1 envf=$2
  shift 2
  start "$job" 0 "$envf" "$@"
  sleep 0.5
  start "$job" 1 "$envf" "$@"
  wait_said "$WORK/$job.out.1" "." 10 || wait_file "$WORK/$job.rank.1.0" 10
  sleep 0.3
  start "$job" 2 "$envf" "$@"
}
end_job() {  # end_job JOB: the workers finish; every launcher's status, "0 0 0"
  touch "$WORK/$1.finish"
  echo "$(wait_status "$1" 0 20) $(wait_status "$1" 1 20) $(wait_status "$1" 2 20)"
}

# --- 1. A node failing its own check is never seated.
J=cmd
touch "$WORK/$J.sick.1"
start_three $J no_env --nnodes 2:2 $(rdzv 29471 "cmd-$$") --nproc-per-node 1 --max-restarts 1 \
  --rdzv-last-call 1 --node-timeout 5 --bad-nodes-file "$WORK/$J.bad" --events-file "$WORK/$J.events" \
  --health-command 'echo "scratch of $HOST_ID looked at"; test ! -e "$W/$JOB.sick.$HOST_ID"'
wait_file "$WORK/$J.rank.0.0" 20 && wait_file "$WORK/$J.rank.2.0" 10
check "health-command: the failing host 1 is never seated; hosts 0 and 2 run round 0" \
  bash -c "[ ! -e '$WORK/$J.rank.1.0' ] && [ \"\$(cut -d' ' -f1,2 '$WORK/$J.rank.2.0')\" = '1 2' ]" ||
  show $J
wait_said "$WORK/$J.out.1" "benched" 5
check "health-command: host 1 says it is benched, why, and that it waits for the job's end" \
  grep -q "this node is benched (failed its health check: command: exit 1: scratch of 1 looked at): it holds no rank" \
  "$WORK/$J.out.1" || show $J
check "health-command: the deciding node names host 1, its address and the check" \
  grep -q "benched .*(10.77.0.2): failed its health check: command: exit 1" "$WORK/$J".out.* || show $J
check "health-command: --bad-nodes-file has one JSON line for host 1 (address, reason, figure, job)" \
  /usr/bin/python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 1, lines
b = lines[0]
assert b["addr"] == "10.77.0.2" and b["reason"] == "failed its health check", b
assert b["figure"].startswith("command: exit 1") and b["job"] and b["time"], b' "$WORK/$J.bad"
got=$(end_job $J)
check "health-command: the job exits 0 on every host, the benched one with it ($got)" [ "$got" = "0 0 0" ] ||
  show $J
check "health-command: the events (three launchers, one file): the bench once, on the deciding node; the benched host sat out (benched_waiting) to the end; two nodes formed round 0" \
  /usr/bin/python3 -c '
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
kinds = lambda k: [e for e in events if e["kind"] == k]
benched = kinds("node_benched")
assert len(benched) == 1 and benched[0]["details"]["addr"] == "10.77.0.2", benched
waited = kinds("ended_while_waiting")
assert len(waited) == 1 and waited[0]["details"]["exit_code"] == 0, waited
sits = kinds("benched_waiting")
assert len(sits) == 1 and "health check" in sits[0]["details"]["why"] and sits[0]["time"] <= waited[0]["time"], sits
formed = [e["node_rank"] for e in kinds("rendezvous_formed") if e["round"] == 0]
assert sorted(formed) == [0, 1] and len(kinds("end")) == 3, (formed, kinds("end"))' "$WORK/$J.events" ||
  show $J
check "health-command: the benched host's summary says it held no rank and why" \
  grep -q "this node held no rank: it failed its health check: command: exit 1" "$WORK/$J.out.1"
check "health-command: every --summary-file lists the bench with its reason, the benched host's own too (node_rank -1: it held none)" \
  /usr/bin/python3 -c '
import json, sys
for path in sys.argv[1:]:
    s = json.load(open(path))
    assert [(b["addr"], b["reason"]) for b in s.get("benched", [])] == [("10.77.0.2", "failed its health check")], (path, s)
s = json.load(open(sys.argv[2]))
assert s["node_rank"] == -1 and s["exit_code"] == 0 and s["workers"] == [], s' \
  "$WORK/$J.summary.0.json" "$WORK/$J.summary.1.json" "$WORK/$J.summary.2.json" || show $J
check "health-command: the summary says what Slurm, Kubernetes and Azure take" \
  grep -q "srun --exclude=.*Kubernetes: kubectl taint nodes .*AZ_BATCH_NODE_ID" "$WORK/$J.out.0"

# --- 2. A seated node's port goes DOWN between rounds.
J=nic
start_three $J root_env --nnodes 2:2 $(rdzv 29472 "nic-$$") --nproc-per-node 1 --max-restarts 3 \
  --rdzv-last-call 1 --node-timeout 5 --health-checks nic
wait_file "$WORK/$J.rank.0.0" 20 && wait_file "$WORK/$J.rank.1.0" 10
wait_said "$WORK/$J.out.2" "hot spare" 10
check "nic: round 0 runs on hosts 0 and 1, host 2 waits as the spare" \
  bash -c "[ -e '$WORK/$J.rank.1.0' ] && grep -q 'hot spare' '$WORK/$J.out.2'" || show $J
port_state 1 "1: DOWN" "3: Disabled"
touch "$WORK/$J.fail.0.0"  # the round ends (a failure on node 0): the next one looks again
for _ in $(seq 300); do ls "$WORK/$J".rank.2.[0-9] >/dev/null 2>&1 && break; sleep 0.05; done
spare_round=$(ls "$WORK/$J".rank.2.[0-9] 2>/dev/null | head -1 | sed 's/.*\.//')
check "nic: host 1's port DOWN: the spare takes node rank 1 in the next round (round $spare_round)" \
  bash -c "[ -n '$spare_round' ] && [ \"\$(cut -d' ' -f1 '$WORK/$J.rank.2.$spare_round')\" = 1 ] &&
           [ ! -e '$WORK/$J.rank.1.$spare_round' ]" || show $J
check "nic: the bench names host 1's port and its state" \
  grep -q "benched .*(10.77.0.2.*failed its health check: nic: mlx5_0/1 is DOWN (not ACTIVE)" "$WORK/$J".out.* ||
  show $J
got=$(end_job $J)
check "nic: the job exits 0 on every host ($got)" [ "$got" = "0 0 0" ] || show $J

# --- 3. A node whose rank fails first twice is benched.
J=twice
start_three $J name_env --nnodes 2:2 $(rdzv 29473 "twice-$$") --nproc-per-node 1 --max-restarts 4 \
  --rdzv-last-call 1 --node-timeout 5 --bench-after 2 --bad-nodes-file "$WORK/$J.bad"
wait_file "$WORK/$J.rank.1.0" 20
wait_said "$WORK/$J.out.2" "hot spare" 10
touch "$WORK/$J.fail.1.0" "$WORK/$J.fail.1.1"
wait_file "$WORK/$J.rank.2.2" 20
check "bench-after 2: host 1 failed first in rounds 0 and 1; round 2 runs the spare in its place" \
  bash -c "[ -e '$WORK/$J.rank.1.1' ] && [ ! -e '$WORK/$J.rank.1.2' ] &&
           [ \"\$(cut -d' ' -f1 '$WORK/$J.rank.2.2')\" = 1 ]" || show $J
check "bench-after 2: the bench says why" \
  grep -q "benched .*(10.77.0.2.*its rank failed first in 2 rounds (--bench-after 2)" "$WORK/$J".out.* ||
  show $J
got=$(end_job $J)
check "bench-after 2: the job exits 0 on every host ($got)" [ "$got" = "0 0 0" ] || show $J
check "bench-after 2: the machine's name stays with the bench (--bad-nodes-file, summary, the Azure hint)" \
  bash -c "grep -q '\"machine\":\"vm-1\"' '$WORK/$J.bad' && cat '$WORK/$J'.summary.*.json | grep -q '\"machine\": \"vm-1\"' &&
           cat '$WORK/$J'.out.* | grep -q 'AZ_BATCH_NODE_ID (vm-1)'" || show $J

# --- 4. A launcher killed alone is a lost node.
J=kill
start_three $J no_env --nnodes 2:2 $(rdzv 29474 "kill-$$") --nproc-per-node 1 --max-restarts 2 \
  --rdzv-last-call 1 --node-timeout 5
wait_file "$WORK/$J.rank.1.0" 20
wait_said "$WORK/$J.out.2" "hot spare" 10
# The process its scheduler started (srun's, the container's entrypoint): the guardian, the
# launcher's first process, whose parent is no launcher.
guardian=""
for p in $(grep -l -s -a "LAUNCHER=$MARK-$J-1\b" /proc/[0-9]*/environ | cut -d/ -f3); do
  [ "$(cat /proc/$p/comm 2>/dev/null)" = aml-launch ] || continue
  parent=$(ps -o ppid= -p "$p" | tr -d ' ')
  [ "$(cat /proc/$parent/comm 2>/dev/null)" = aml-launch ] || guardian=$p
done
check "kill: host 1's launcher has its guardian ($guardian)" [ -n "$guardian" ]
kill -KILL "$guardian"
wait_file "$WORK/$J.rank.2.1" 20
check "kill: the spare runs round 1 at node rank 1" \
  bash -c "[ \"\$(cut -d' ' -f1 '$WORK/$J.rank.2.1' 2>/dev/null)\" = 1 ]" || show $J
check "kill: nobody calls it a stop of the job" bash -c "! grep -q 'stopped by SIGKILL' '$WORK/$J'.out.0 '$WORK/$J'.out.2"
check "kill: the lost launcher is benched" \
  grep -q "benched .*(10.77.0.2.*its launcher was lost" "$WORK/$J".out.* || show $J
touch "$WORK/$J.finish"
s0=$(wait_status $J 0 20); s1=$(wait_status $J 1 20); s2=$(wait_status $J 2 20)
check "kill: the job exits 0 on hosts 0 and 2; the killed one 137 ($s0 $s2, $s1)" \
  [ "$s0 $s2 $s1" = "0 0 137" ] || show $J

# --- 5. A fixed-size job with a bad GPU fails at once, naming it.
J=gpu
echo "count 2" >"$WORK/nvml.0"
printf 'count 2\nrecovery 1 1\n' >"$WORK/nvml.1"
t0=$(date +%s%N)
start $J 0 gpu_env --nnodes 2 --node-rank 0 $(rdzv 29475 "gpu-$$") --master-addr "$MASTER" \
  --master-port 29475 --nproc-per-node 1 --health-checks gpu --bad-nodes-file "$WORK/$J.bad"
start $J 1 gpu_env --nnodes 2 --node-rank 1 $(rdzv 29475 "gpu-$$") --master-addr "$MASTER" \
  --master-port 29475 --nproc-per-node 1 --health-checks gpu --bad-nodes-file "$WORK/$J.bad"
s0=$(wait_status $J 0 10); s1=$(wait_status $J 1 10)
ms=$((($(date +%s%N) - t0) / 1000000))
check "fixed size, bad GPU: both nodes exit 2 (nothing started) at once ($s0 $s1 in $ms ms, at most 2000)" \
  bash -c "[ '$s0' = 2 ] && [ '$s1' = 2 ] && [ $ms -le 2000 ]" || show $J
check "fixed size, bad GPU: every node names the node, the check and its figure" bash -c \
  "grep -q \"node 1 (.*) at 10.77.0.2 failed its health check: gpu: GPU 1: the driver's recovery action is reset the GPU\" '$WORK/$J.out.0' &&
   grep -q 'node 1 (.*) at 10.77.0.2 failed its health check: gpu: GPU 1' '$WORK/$J.out.1'" || show $J
check "fixed size, bad GPU: no worker started" bash -c "! ls '$WORK/$J'.rank.* >/dev/null 2>&1"
check "fixed size, bad GPU: node 0 and the failing node each write it to --bad-nodes-file (for the retry)" \
  /usr/bin/python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 2, lines
for b in lines:
    assert b["addr"] == "10.77.0.2" and b["node_rank"] == 1 and b["reason"] == "failed its health check", b
    assert b["figure"].startswith("gpu: GPU 1") and b["job"], b' "$WORK/$J.bad" || show $J
check "fixed size, bad GPU: every node's --summary-file says nothing started, why, and lists the bench" \
  /usr/bin/python3 -c '
import json, sys
for path in sys.argv[1:]:
    s = json.load(open(path))
    assert s["exit_code"] == 2 and "failed its health check" in s["start_error"], s
    assert [(b["addr"], b["reason"]) for b in s["benched"]] == [("10.77.0.2", "failed its health check")], s
    assert s["workers"] == [], s' "$WORK/$J.summary.0.json" "$WORK/$J.summary.1.json" || show $J

# --- 6. A member seated at node rank 3 fails its check at the next round.
J=four
for h in 0 1 2 3 4; do port_state $h "4: ACTIVE" "5: LinkUp"; done  # case 2's DOWN mended
ARGS=(--nnodes 4:4 $(rdzv 29476 "four-$$") --nproc-per-node 1 --max-restarts 1 --rdzv-last-call 1
  --node-timeout 5 --health-checks nic)
start $J 0 root_env "${ARGS[@]}"
sleep 0.5
for h in 1 2 3; do start $J $h root_env "${ARGS[@]}"; done
for h in 0 1 2 3; do wait_file "$WORK/$J.rank.$h.0" 20; done
start $J 4 root_env "${ARGS[@]}"
wait_said "$WORK/$J.out.4" "hot spare" 10
victim=$(FIRST_HOST=0 HOSTS=4 host_with_rank $J 0 3)
check "four: round 0 seats hosts 0-3 (node rank 3 on host $victim), host 4 waits as the spare" \
  bash -c "[ -n '$victim' ] && grep -q 'hot spare' '$WORK/$J.out.4'" || show $J
port_state "$victim" "1: DOWN" "3: Disabled"
touch "$WORK/$J.fail.0.0"
for _ in $(seq 400); do ls "$WORK/$J".rank.4.[0-9] >/dev/null 2>&1 && break; sleep 0.05; done
spare_round=$(ls "$WORK/$J".rank.4.[0-9] 2>/dev/null | head -1 | sed 's/.*\.//')
check "four: the spare takes node rank 3 (round $spare_round); the restart budget was not spent on it" \
  bash -c "[ -n '$spare_round' ] && [ \"\$(cut -d' ' -f1 '$WORK/$J.rank.4.$spare_round')\" = 3 ]" || show $J
check "four: the bench names host $victim's port" \
  grep -q "benched .*(10.77.0.$((victim + 1)).*failed its health check: nic: mlx5_0/1 is DOWN" "$WORK/$J".out.* ||
  show $J
touch "$WORK/$J.finish"
got=""
for h in 0 1 2 3 4; do got="$got$(wait_status $J $h 20) "; done
check "four: the job exits 0 on every host ($got)" [ "$got" = "0 0 0 0 0 " ] || show $J

# --- 7. A benched node seated again where the job would otherwise end.
J=reseat
start $J 0 no_env --nnodes 2:2 $(rdzv 29477 "reseat-$$") --nproc-per-node 1 --max-restarts 2 \
  --rdzv-last-call 1 --node-timeout 5 --bench-after 1
sleep 0.5
start $J 1 no_env --nnodes 2:2 $(rdzv 29477 "reseat-$$") --nproc-per-node 1 --max-restarts 2 \
  --rdzv-last-call 1 --node-timeout 5 --bench-after 1
wait_file "$WORK/$J.rank.1.0" 20
touch "$WORK/$J.fail.1.0"
wait_file "$WORK/$J.rank.1.1" 20
check "reseat: host 1, benched after its rank failed first, runs round 1: no spare, MIN 2" \
  [ -e "$WORK/$J.rank.1.1" ] || show $J
check "reseat: it is said" \
  grep -q "benched node(s) .*10.77.0.2) seated again: without them the job would have fewer than 2 nodes and end" \
  "$WORK/$J".out.* || show $J
touch "$WORK/$J.finish"
got="$(wait_status $J 0 20) $(wait_status $J 1 20)"
check "reseat: the job exits 0 on both hosts ($got)" [ "$got" = "0 0" ] || show $J

# --- 8. Node 0 failing its own check.
J=zero
touch "$WORK/$J.sick.0"
ARGS=(--nnodes 2:2 $(rdzv 29478 "zero-$$") --nproc-per-node 1 --rdzv-last-call 1 --node-timeout 5
  --health-command 'test ! -e "$W/$JOB.sick.$HOST_ID"')
if [ "$BACKEND" = etcd ]; then
  start_three $J no_env "${ARGS[@]}"
  wait_file "$WORK/$J.rank.1.0" 20 && wait_file "$WORK/$J.rank.2.0" 10
  check "zero, etcd: host 0 sits out; hosts 1 and 2 run round 0" \
    bash -c "[ ! -e '$WORK/$J.rank.0.0' ] && [ -e '$WORK/$J.rank.2.0' ]" || show $J
  got=$(end_job $J)
  check "zero, etcd: the job exits 0 on every host ($got)" [ "$got" = "0 0 0" ] || show $J
else
  # Node 0's store's host fails its own check: it holds no rank, yet serves the rendezvous and
  # gives every round's seats. Round 0 runs host 1 alone (1:2) as node 0, its workers meeting
  # at its own address; host 2, come after, waits as a spare, and is seated in round 1 (host 1's
  # worker fails round 0), where the two ranks' torch Gloo allreduce meets at the round's node 0.
  cat >"$WORK/$J.step" <<'STEP'
[ "$TORCHELASTIC_RESTART_COUNT" = 1 ] || exit 0
/usr/bin/python3 -c '
import datetime, torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print(int(t.item()))
dist.destroy_process_group()' >"$W/$JOB.sum.$HOST_ID.part" &&
  mv "$W/$JOB.sum.$HOST_ID.part" "$W/$JOB.sum.$HOST_ID"
STEP
  ARGS=(--nnodes 1:2 $(rdzv 29478 "zero-$$") --nproc-per-node 1 --rdzv-last-call 1 --node-timeout 5
    --max-restarts 2 --bad-nodes-file "$WORK/$J.bad"
    --health-command 'test ! -e "$W/$JOB.sick.$HOST_ID"')
  start $J 0 no_env "${ARGS[@]}"
  sleep 0.5
  start $J 1 no_env "${ARGS[@]}"
  wait_file "$WORK/$J.rank.1.0" 20
  start $J 2 no_env "${ARGS[@]}"
  wait_said "$WORK/$J.out.2" "hot spare" 10
  check "zero: host 0 sits out; host 1 runs round 0 alone as node 0, its workers meeting at its own address" \
    bash -c "[ \"\$(cat '$WORK/$J.rank.1.0')\" = '0 1 1 0 10.77.0.2' ] && [ ! -e '$WORK/$J.rank.0.0' ]" ||
    show $J
  check "zero: host 0 says it is benched and still serves the rendezvous" \
    grep -q "this node is benched (failed its health check: command: exit 1): it holds no rank in this job and keeps serving the job's rendezvous" \
    "$WORK/$J.out.0" || show $J
  touch "$WORK/$J.fail.1.0"
  wait_file "$WORK/$J.sum.1" 30 && wait_file "$WORK/$J.sum.2" 10
  check "zero: round 1 seats the spare come after node 0 sat out: hosts 1 and 2, node 0 on host 1" \
    bash -c "[ \"\$(cut -d' ' -f1,2,5 '$WORK/$J.rank.1.1')\" = '0 2 10.77.0.2' ] &&
             [ \"\$(cut -d' ' -f1,2,5 '$WORK/$J.rank.2.1')\" = '1 2 10.77.0.2' ]" || show $J
  check "zero: round 1's two ranks meet at its node 0 (torch Gloo allreduce: 1 + 2)" \
    bash -c "[ \"\$(cat '$WORK/$J.sum.1' '$WORK/$J.sum.2' | tr '\n' ' ')\" = '3 3 ' ]" || show $J
  # The round's node 0 paused (every process of host 1): no member watches it, the store's host
  # does; lost after --node-timeout, host 2 runs round 2 alone as node 0.
  # Twice: a process that started (forked) while the first look ran is stopped by the second;
  # and killed with whatever the host has at the end (nothing of it is left running).
  paused=$(host_pids $J 1)
  kill -STOP $paused 2>/dev/null
  paused="$paused $(host_pids $J 1)"
  kill -STOP $paused 2>/dev/null
  wait_file "$WORK/$J.rank.2.2" 30
  kill -KILL $paused $(host_pids $J 1) 2>/dev/null
  check "zero: the round's node 0 paused is found lost by the store's host; host 2 runs round 2 as node 0" \
    bash -c "[ \"\$(cut -d' ' -f1,2,5 '$WORK/$J.rank.2.2')\" = '0 1 10.77.0.3' ]" || show $J
  check "zero: host 2 names host 1's silence" \
    grep -q "node 0 (vm).*no heartbeat for over 5 s (--node-timeout 5 s)" "$WORK/$J.out.2" || show $J
  got=$(end_job $J)
  check "zero: the job exits 0 on hosts 0 and 2, node 0's store's host with it; the paused one killed ($got)" \
    [ "$got" = "0 137 0" ] || show $J
  check "zero: host 0's --summary-file and --bad-nodes-file bench it (node_rank -1: it held none), and the lost host 1" \
    /usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["node_rank"] == -1 and s["exit_code"] == 0 and s["workers"] == [], s
benched = [(b["addr"], b["reason"], b["node_rank"]) for b in s["benched"]]
assert benched == [("10.77.0.1", "failed its health check", -1), ("10.77.0.2", "its launcher was lost", 0)], s
bad = [json.loads(l) for l in open(sys.argv[2])]
assert [b["addr"] for b in bad] == ["10.77.0.1", "10.77.0.2"], bad' "$WORK/$J.summary.0.json" "$WORK/$J.bad" || show $J
  # The round's only member killed with no restart left: nobody lives to say the job's end; the
  # store's host ends with the round's failure, not after --rdzv-timeout.
  J=zeroleft
  touch "$WORK/$J.sick.0"
  ARGS=(--nnodes 1:2 $(rdzv 29479 "zeroleft-$$") --nproc-per-node 1 --rdzv-last-call 1 --node-timeout 5
    --max-restarts 0 --health-command 'test ! -e "$W/$JOB.sick.$HOST_ID"')
  start $J 0 no_env "${ARGS[@]}"
  sleep 0.5
  start $J 1 no_env "${ARGS[@]}"
  wait_file "$WORK/$J.rank.1.0" 20
  kill_host $J 1
  s0=$(wait_status $J 0 20)
  check "zero, its member killed with no restart left: the store's host ends with the round's failure (exit $s0)" \
    bash -c "[ '$s0' = 1 ] && grep -q \"round 0's members all left without a word after its failure: .*its launcher was lost\" '$WORK/$J.out.0'" ||
    show $J
fi

# A process SIGKILLed a moment ago (a torch worker of a killed host) may still be tearing down
# on a loaded machine: given 10 s to go, never more.
for _ in $(seq 50); do
  left=$(grep -l -s "AML_TEST_MARK=$MARK" /proc/[0-9]*/environ | wc -l)
  [ "$left" = 0 ] && break
  sleep 0.2
done
check "nothing of the jobs is left ($left)" [ "$left" = 0 ] ||
  ps -o pid,ppid,stat,etime,args -p "$(grep -l -s "AML_TEST_MARK=$MARK" /proc/[0-9]*/environ | cut -d/ -f3 | paste -sd,)"
finish
