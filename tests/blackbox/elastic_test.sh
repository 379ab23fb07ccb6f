#!/usr/bin/env bash
# Elastic jobs (DESIGN §5) on a cluster of network namespaces (tests/cluster/netns_cluster.sh):
# nodes without a fixed rank, rounds with changing members, hot spares, a lost node replaced.
# 1. The environment a Kubeflow PyTorchJob with an elasticPolicy gives every pod (PET_NNODES=2:4,
#    the rendezvous endpoint, no rank): three nodes make one round of 3 after the last call;
#    the launcher at node rank 2 SIGKILLed: a round of 2, the others keep their ranks; a fourth
#    node waits as a spare and is admitted at the next round (a worker failure ends the round);
#    only one node left: the job waits --rdzv-timeout, then fails naming what was missing.
# 2. --nnodes 2:2 with four launchers: two spares wait; a running node killed: the first spare
#    takes its node rank and the job finishes 0; the other spare ends with the job's status.
#    --admit-newcomers at-once: a node that comes ends a round below the most nodes at once.
#    --nnodes 3:4 with two launchers: node 0 gives up after --rdzv-timeout and the follower
#    fails with node 0's reason. A node whose workers finished well, then killed, costs the job
#    nothing. Benched nodes are seated again where the job would end, a member of the round
#    before that never comes (paused) given up after --node-timeout. A newcomer is not admitted
#    at once once a notice ends the job.
# 3. A real torch gloo job that saves a checkpoint each step and resumes from it, through a lost
#    node (WORLD_SIZE 3, then 2): the right result.
# With AML_TEST_RDZV=etcd every case runs again, with the rendezvous in a real three-member
# etcd (tests/cluster/etcd_cluster.sh) on hosts 5-7 of its own: a killed launcher is heard at
# once there too (its connection to the round's node 0 closes). One case differs there: two
# launchers killed at once, the one heard second is seated in the next round until its lease
# ends (a round more, no restart used).
# usage: elastic_test.sh AML_LAUNCH ELASTIC_CHECKPOINT_PY
set -u
BIN=$(realpath "$1")
TRAIN=$(realpath "$2")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
# What the launcher, torch (torchrun's torchelastic_* logs), JAX and TensorFlow write to
# TMPDIR goes with the test's files.
export TMPDIR="$WORK"
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
NET="el$$"
HOSTS=5
BACKEND=${AML_TEST_RDZV:-c10d}
ETCD="$(dirname "$0")/../cluster/etcd_cluster.sh"
[ "$BACKEND" = etcd ] && HOSTS=8  # 5-7: etcd's members
py=/usr/bin/python3
kill_all() { kill -KILL $(grep -l "MARK=aml-elastic-$$-" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3) 2>/dev/null; }
trap 'kill_all; [ "$BACKEND" = etcd ] && bash "$ETCD" down "$WORK"
      bash "$CLUSTER" down "$NET" $HOSTS; [ -n "${AML_TEST_KEEP:-}" ] || rm -rf "$WORK"' EXIT
netns_up "$CLUSTER" "$NET" $HOSTS || { finish; exit; }
MASTER=$(bash "$CLUSTER" addr 0)
# rdzv PORT ID: where the rendezvous is: node 0's store at MASTER:PORT, or etcd's members.
if [ "$BACKEND" = etcd ]; then
  check "etcd: a three-member cluster starts on hosts 5-7" bash "$ETCD" up "$NET" "$WORK" 5 6 7
  ENDPOINTS=$(bash "$ETCD" endpoints 5 6 7)
  rdzv() { echo --rdzv-backend etcd --rdzv-endpoint "$ENDPOINTS" --rdzv-id "$2"; }
  RDZV_ENV="PET_RDZV_BACKEND=etcd PET_RDZV_ENDPOINT=$ENDPOINTS"
else
  rdzv() { echo --rdzv-endpoint "$MASTER:$1" --rdzv-id "$2"; }
  RDZV_ENV="PET_RDZV_BACKEND=c10d PET_RDZV_ENDPOINT=$MASTER:29400"
fi

# Each worker writes its node rank and world size for its round, then runs until told:
# $W/finish ends every worker well, $W/finish.HOST.ROUND those of one host in one round;
# $W/fail.HOST.ROUND makes local rank 0 of that host fail.
cat >"$WORK/worker.sh" <<'EOF'
#!/bin/sh
trap 'touch "$W/$JOB.noticed.$HOST_ID"' USR1  # a notice: said, and it runs on until told
r=$TORCHELASTIC_RESTART_COUNT
echo "round $r rank $RANK/$WORLD_SIZE node $GROUP_RANK/$GROUP_WORLD_SIZE max $TORCHELASTIC_MAX_RESTARTS"
[ "$LOCAL_RANK" = 0 ] && { echo "$GROUP_RANK $GROUP_WORLD_SIZE $WORLD_SIZE $RANK" >"$W/$JOB.rank.$HOST_ID.$r.part" &&
  mv "$W/$JOB.rank.$HOST_ID.$r.part" "$W/$JOB.rank.$HOST_ID.$r"; }  # whole or not there
while :; do
  [ -e "$W/$JOB.fail.$HOST_ID.$r" ] && [ "$LOCAL_RANK" = 0 ] && exit 3
  [ -e "$W/$JOB.finish" ] && exit 0
  [ -e "$W/$JOB.finish.$HOST_ID.$r" ] && { touch "$W/$JOB.finished.$HOST_ID.$r"; exit 0; }
  sleep 0.05
done
EOF
chmod +x "$WORK/worker.sh"

kubeflow_env() {  # what the training operator sets with elasticPolicy (min 2, max 4)
  echo PET_NNODES=2:4 $RDZV_ENV PET_RDZV_ID="job-$$" \
    PET_MAX_RESTARTS=3 PET_NPROC_PER_NODE=2
}
# start JOB HOST ENV-FUNCTION ARGS...: host HOST's launcher in the background ($pid_JOB_HOST)
start() {
  local job=$1 host=$2 envf=$3
  shift 3
  (
    bash "$CLUSTER" exec "$NET" "$host" env -i PATH=/usr/bin:/bin W="$WORK" JOB="$job" \
      HOST_ID="$host" MARK="aml-elastic-$$-$job-$host" $($envf) "$BIN" "$@" \
      --summary-file "$WORK/$job.summary.$host.json" -- "${CMD[@]}" \
      >"$WORK/$job.out.$host" 2>&1
    write_status "$WORK/$job.status.$host" $?
  ) 2>/dev/null &
}
no_env() { :; }
CMD=("$WORK/worker.sh")
# The launcher processes of one host (its guardian and its supervisor): the supervisor first.
launcher_pids() {
  local all p
  all=$(grep -l -a "MARK=aml-elastic-$$-$1-$2\b" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
  for p in $all; do [ "$(readlink /proc/$p/exe)" = "$BIN" ] && echo "$p"; done | sort -rn
}
kill_host() { kill -KILL $(launcher_pids "$1" "$2") 2>/dev/null; }

# --- 1. Kubeflow elasticPolicy, PET_NNODES=2:4.
J=kf
ARGS=(--rdzv-last-call 1 --node-timeout 5 --rdzv-timeout 8)
# Host 0 first by a whole second (it is node 0 below: a launcher's first answer from etcd has
# taken 0.7 s here), then hosts 1 and 2 within the last call.
start $J 0 kubeflow_env "${ARGS[@]}"
sleep 1
start $J 1 kubeflow_env "${ARGS[@]}"
sleep 0.3
start $J 2 kubeflow_env "${ARGS[@]}"
for h in 0 1 2; do wait_file "$WORK/$J.rank.$h.0" 15; done
check "kubeflow 2:4: three nodes make one round of 3 after the last call" \
  grep -q "elastic round 0: 3 nodes" "$WORK/$J.out.0" || show $J
check "kubeflow 2:4: node 0 serves the store; node ranks 0, 1, 2; 6 ranks" bash -c \
  "[ \"\$(cat '$WORK'/$J.rank.[0-2].0 | cut -d' ' -f1,3 | sort | tr '\n' ' ')\" = '0 6 1 6 2 6 ' ] && [ \"\$(cut -d' ' -f1 '$WORK/$J.rank.0.0')\" = 0 ]"
check "kubeflow 2:4: the workers have torchrun's elastic variables (max restarts 3)" \
  grep -q "round 0 rank .*/6 node .*/3 max 3" "$WORK/$J.out.1"

victim=$(host_with_rank $J 0 2)
keep=$((3 - victim))  # of hosts 1 and 2, the one that stays
keep_rank=$(rank_of $J "$keep" 0)
t0=$(date +%s%N)
kill_host $J "$victim"
wait_file "$WORK/$J.rank.0.1" 15 && wait_file "$WORK/$J.rank.$keep.1" 15
ms=$((($(date +%s%N) - t0) / 1000000))
check "kubeflow 2:4: node rank 2's launcher SIGKILLed: a round of 2 ($ms ms from the kill, last call 1 s)" \
  grep -q "elastic round 1: 2 nodes" "$WORK/$J.out.0" || show $J
check "kubeflow 2:4: nodes 0 and $keep keep their ranks (0 and $keep_rank), world size 4" bash -c \
  "[ \"\$(cut -d' ' -f1,3 '$WORK/$J.rank.0.1')\" = '0 4' ] && [ \"\$(cut -d' ' -f1,3 '$WORK/$J.rank.$keep.1')\" = '$keep_rank 4' ]"
check "kubeflow 2:4: node 0 says who left" grep -q "elastic round 1: 2 nodes .*left: node 2" "$WORK/$J.out.0"

start $J 3 kubeflow_env "${ARGS[@]}"
wait_file "$WORK/$J.out.3" 5
for _ in $(seq 100); do grep -q "hot spare" "$WORK/$J.out.3" && break; sleep 0.05; done
check "kubeflow 2:4: a fourth node that comes while a round runs waits for the next round" \
  grep -q "round 1 runs: this node waits for the next round as a hot spare" "$WORK/$J.out.3" || show $J
touch "$WORK/$J.fail.$keep.1"
wait_file "$WORK/$J.rank.3.2" 15
wait_file "$WORK/$J.rank.$keep.2" 5
got="$(rank_of $J 3 2) $(rank_of $J "$keep" 2) $(cut -d' ' -f3 "$WORK/$J.rank.3.2" 2>/dev/null)"
check "kubeflow 2:4: a worker failure ends the round; the fourth node is admitted at node rank 2 ($got)" \
  [ "$got" = "2 $keep_rank 6" ] || show $J
check "kubeflow 2:4: node 0 names the failure as why round 1 ended" \
  grep -q "rank .* on node $keep_rank .*exit code 3\|node $keep_rank .*exit code 3" "$WORK/$J.out.0"

t0=$(date +%s%N)
# Both hosts in one kill: node 0 hears a killed launcher at once (under etcd too), and one
# killed a moment after the other could have taken a seat in the next round meanwhile.
kill -KILL $(launcher_pids $J "$keep") $(launcher_pids $J 3) 2>/dev/null
status=$(wait_status $J 0 30)
ms=$((($(date +%s%N) - t0) / 1000000))
# Node 0 may seat the launcher killed second in round 3 (the members of the round before are
# seated without counting in again) where it had not yet heard it gone (its closed
# connection). Under etcd round 3 then forms again, as round 4, once its lease ended, without
# it and without a restart used; on node 0's store round 3 fails once the seated one has not
# come within --node-timeout (5 s), naming it. Where node 0 had heard both gone, round 3 waits
# --rdzv-timeout for a second node.
given_up=3 waited=7500 missing="expected at least 2 nodes within --rdzv-timeout 8 s for round 3 .*only 1 came"
if [ "$BACKEND" = etcd ] && grep -q "for round 4 .*only 1 came" "$WORK/$J.out.0"; then
  given_up=4 missing="expected at least 2 nodes within --rdzv-timeout 8 s for round 4 .*only 1 came"
elif [ "$BACKEND" != etcd ] && grep -q "round 3 of run .*node rank(s) 1 of 2 did not" "$WORK/$J.out.0"; then
  waited=4500 missing="round 3 of run .*every node seated in it to join within --node-timeout 5 s .*node rank(s) 1 of 2 did not"
fi
check "kubeflow 2:4: one node left: node 0 waits, then fails ($status after $ms ms, at least $waited)" \
  bash -c "[ '$status' = 2 ] && [ $ms -ge $waited ] && [ $ms -lt 20000 ]" || show $J
check "kubeflow 2:4: one node left: the error says what was missing (round $given_up)" \
  grep -q "$missing" "$WORK/$J.out.0" || show $J
[ "$given_up" = 4 ] && check "kubeflow 2:4, etcd: round 3 ends for a new round when the one seated there, killed, is found gone" \
  grep -q "stopped its workers for a new round: node 1 .*its etcd lease ended: .*before it came to round 3" "$WORK/$J.out.0"

left=$(grep -l "MARK=aml-elastic-$$-$J-" /proc/[0-9]*/environ 2>/dev/null | wc -l)
check "kubeflow 2:4: nothing of the job is left ($left)" [ "$left" = 0 ]

# --- 2. --nnodes 2:2 and four launchers: two hot spares; a member lost, a spare takes its rank.
J=sp
ARGS=(--nnodes 2:2 $(rdzv 29401 "spares-$$") --nproc-per-node 1
  --max-restarts 2 --rdzv-last-call 1 --node-timeout 5)
node0_events() { echo AML_LAUNCH_EVENTS_FILE="$WORK/$J.events.0.jsonl"; }
start $J 0 node0_events "${ARGS[@]}"
sleep 0.3
start $J 1 no_env "${ARGS[@]}"
wait_file "$WORK/$J.rank.1.0" 15
start $J 2 no_env "${ARGS[@]}"
sleep 0.3
start $J 3 no_env "${ARGS[@]}"
for h in 2 3; do
  for _ in $(seq 100); do grep -q "hot spare" "$WORK/$J.out.$h" 2>/dev/null && break; sleep 0.05; done
done
check "2:2, four launchers: two wait as hot spares" bash -c \
  "grep -q 'hot spare' '$WORK/$J.out.2' && grep -q 'hot spare' '$WORK/$J.out.3'" || show $J
# A fifth launcher, a spare too, stopped by SIGTERM while it waits (a pod deleted, scancel): it
# ends at once as a stop, with its summary and its events' end (the fault campaign found a
# spare that left neither), and the job goes on.
spare_events() { echo AML_LAUNCH_EVENTS_FILE="$WORK/$J.events.4.jsonl"; }
start $J 4 spare_events "${ARGS[@]}"
for _ in $(seq 100); do grep -q "hot spare" "$WORK/$J.out.4" 2>/dev/null && break; sleep 0.05; done
t_term=$(date +%s%N)
kill -TERM $(launcher_pids $J 4 | tail -1) 2>/dev/null  # the guardian: the pid its scheduler knows
s4=$(wait_status $J 4 5)
ms=$((($(date +%s%N) - t_term) / 1000000))
check "2:2: a waiting spare stopped by SIGTERM ends at once as a stop ($s4 after $ms ms), saying so" \
  bash -c "[ '$s4' = 143 ] && [ $ms -lt 3000 ] && grep -q 'stopped by SIGTERM from outside' '$WORK/$J.out.4'" || show $J
check "2:2: its summary says the stop, no rank held, no worker; its events end" \
  $py -c 'import json, sys
s = json.load(open(sys.argv[1]))
assert s["exit_code"] == 143 and s["node_rank"] == -1 and s["first_failure"] is None, s
assert s["stopped"]["signal_name"] == "SIGTERM" and s["stopped"]["workers"] == 0, s["stopped"]
kinds = [json.loads(l)["kind"] for l in open(sys.argv[2])]
assert kinds[-3:] == ["stop", "round_ended", "end"], kinds' \
  "$WORK/$J.summary.4.json" "$WORK/$J.events.4.jsonl"
t0=$(date +%s%N)
kill_host $J 1
wait_file "$WORK/$J.rank.2.1" 15
ms=$((($(date +%s%N) - t0) / 1000000))
check "2:2: node 1 lost; the first spare takes node rank 1 in the next round ($ms ms)" \
  bash -c "[ \"\$(cut -d' ' -f1,2 '$WORK/$J.rank.2.1')\" = '1 2' ] && [ \"\$(cut -d' ' -f1 '$WORK/$J.rank.0.1')\" = 0 ]" ||
  show $J
check "2:2: node 1 lost: replaced within 3 s ($ms ms)" [ "$ms" -lt 3000 ]
touch "$WORK/$J.finish"
s0=$(wait_status $J 0 15); s2=$(wait_status $J 2 15); s3=$(wait_status $J 3 15)
check "2:2: the job finishes 0 on node 0 and the spare that took over ($s0 $s2)" \
  bash -c "[ '$s0' = 0 ] && [ '$s2' = 0 ]"
check "2:2: the spare never needed ends with the job's status, saying so ($s3)" \
  bash -c "[ '$s3' = 0 ] && grep -q 'the job ended (exit 0) while this node waited for a round' '$WORK/$J.out.3'" ||
  show $J
check "2:2: node 0's events say node 1 joined, was lost, round 1 formed and the spare joined it" \
  $py -c 'import json, sys
events = list(map(json.loads, open(sys.argv[1])))
kinds = [(e["kind"], e["details"]) for e in events]
lost = [i for i, (k, d) in enumerate(kinds) if k == "node_lost" and d["node_rank"] == 1]
formed = [i for i, (k, d) in enumerate(kinds) if k == "rendezvous_formed"]
joined = [(e["round"], e["details"]["node_rank"], e["details"]["addr"]) for e in events if e["kind"] == "node_joined"]
assert lost and formed[-1] > lost[0], kinds
assert [j[:2] for j in joined] == [(0, 1), (1, 1)] and joined[0][2] != joined[1][2], joined' \
  "$WORK/$J.events.0.jsonl"
check "2:2: the spare's summary says its time went in a spare's wait, none running" \
  $py -c 'import json, sys; t = json.load(open(sys.argv[1]))["time"]
assert t["spare_seconds"] > 0 and t["running_seconds"] == 0 and t["trained_share"] == 0, t
# Its whole life: the rendezvous that found it a spare, then the wait (a spare that lived 0.3 s
# spent 0.04 s of it meeting the others).
assert t["spare_seconds"] + t["rendezvous_seconds"] >= 0.95 * t["wall_seconds"] > 0, t' \
  "$WORK/$J.summary.3.json"
check "2:2: --summary-file records both rounds: their members, who left and came, why each ended" \
  $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
r = s["rounds"]
assert [x["round"] for x in r] == [0, 1], r
assert [m["node_rank"] for m in r[1]["members"]] == [0, 1], r
assert len(r[1]["left"]) == 1 and len(r[1]["came"]) == 1, r
assert "its launcher was lost" in r[0]["ended"] and r[1]["ended"] == "complete", r
assert s["exit_code"] == 0 and s["restarts"] == 1, s' "$WORK/sp.summary.0.json"

# --- 2b. --admit-newcomers at-once: a node that comes ends a round below the most nodes at
# once, and the next round (with it) uses no restart (--max-restarts 0).
J=ao
ARGS=(--nnodes 2:3 $(rdzv 29403 "at-once-$$") --nproc-per-node 1
  --admit-newcomers at-once --rdzv-last-call 1 --node-timeout 5)
start $J 0 no_env "${ARGS[@]}"
sleep 0.3
start $J 1 no_env "${ARGS[@]}"
wait_file "$WORK/$J.rank.1.0" 15
start $J 2 no_env "${ARGS[@]}"
wait_file "$WORK/$J.rank.2.0" 15
check "at-once: the third node ends the round of 2 and comes in at node rank 2 of 3" bash -c \
  "[ \"\$(cut -d' ' -f1,2 '$WORK/$J.rank.2.0')\" = '2 3' ] && grep -q 'ends round 0 to admit 1 node' '$WORK/$J.out.0'" ||
  show $J
touch "$WORK/$J.finish"
s0=$(wait_status $J 0 15); s1=$(wait_status $J 1 15); s2=$(wait_status $J 2 15)
check "at-once: the job finishes 0 everywhere without a restart to spare ($s0 $s1 $s2)" \
  [ "$s0 $s1 $s2" = "0 0 0" ]

# --- 2c. A node whose workers all finished well costs the job nothing when its launcher goes
# after (killed; or gone with the job's end before node 0 heard every goodbye), in a round
# started at once (node 0 looks for its members' "gone" keys and, under etcd, their leases).
# Before, under etcd node 0 named it lost and ran a round without it.
J=fin
ARGS=(--nnodes 2:3 $(rdzv 29404 "finished-$$") --nproc-per-node 1 --max-restarts 2
  --rdzv-last-call 1 --node-timeout 3)
for h in 0 1 2; do
  start $J $h no_env "${ARGS[@]}"
  sleep 0.3
done
for h in 0 1 2; do wait_file "$WORK/$J.rank.$h.0" 15; done
touch "$WORK/$J.fail.0.0"  # round 1 starts at once, its members seated without counting in
for h in 0 1 2; do wait_file "$WORK/$J.rank.$h.1" 15; done
one=$(host_with_rank $J 1 1)
touch "$WORK/$J.finish.$one.1"
wait_file "$WORK/$J.finished.$one.1" 10
sleep 1  # its worker reaped, its "done" said
kill_host $J "$one"
sleep 10  # its lease's 3 s, then node 0's look at the leases (every 5 s)
touch "$WORK/$J.finish"
s0=$(wait_status $J 0 15); other=$((3 - one)); s2=$(wait_status $J "$other" 15)
check "finished, then killed: node 1 (host $one) costs nothing; the job finishes 0 ($s0 $s2)" \
  bash -c "[ '$s0' = 0 ] && [ '$s2' = 0 ] && ! grep -q 'joined run round 2\|was lost' '$WORK/$J.out.0'" ||
  show $J

# --- 2d. Benched nodes are seated again where the job would otherwise end, also while a member
# of the round before never comes (paused: no "gone" key): it is given up after --node-timeout.
# Before, the round waited until --rdzv-timeout and failed (the campaign's c10d 211).
J=bn
ARGS=(--nnodes 2:3 $(rdzv 29405 "bench-$$") --nproc-per-node 1 --max-restarts 3 --bench-after 1
  --rdzv-last-call 1 --node-timeout 3 --rdzv-timeout 40)
for h in 0 1 2; do
  start $J $h no_env "${ARGS[@]}"
  sleep 0.3
done
for h in 0 1 2; do wait_file "$WORK/$J.rank.$h.0" 15; done
x=$(host_with_rank $J 0 2)
touch "$WORK/$J.fail.$x.0"  # its rank fails first: benched (--bench-after 1)
a="" b=""
for _ in $(seq 300); do
  a=$(host_with_rank $J 1 0) b=$(host_with_rank $J 1 1)
  [ -n "$a" ] && [ -n "$b" ] && break
  sleep 0.05
done
paused=$(launcher_pids $J "$b")
kill -STOP $paused 2>/dev/null
touch "$WORK/$J.fail.$a.1"  # round 1 ends for node 0's failure: benched too
t0=$(date +%s%N)
wait_file "$WORK/$J.rank.$a.2" 20 && wait_file "$WORK/$J.rank.$x.2" 5
ms=$((($(date +%s%N) - t0) / 1000000))
got=$(cat "$WORK"/$J.rank.*.2 2>/dev/null | cut -d' ' -f2 | tr '\n' ' ')
check "benched and one awaited: round 2 seats the benched hosts $a and $x again ($got; $ms ms; --node-timeout 3 s)" \
  bash -c "[ '$got' = '2 2 ' ] && [ $ms -lt 15000 ] && cat '$WORK'/$J.out.* | grep -q 'round 2: benched node(s) .* seated again'" ||
  show $J
kill -KILL $paused 2>/dev/null
kill -CONT $paused 2>/dev/null
touch "$WORK/$J.finish"
sa=$(wait_status $J "$a" 15); sx=$(wait_status $J "$x" 15)
check "benched and one awaited: the job finishes 0 on both ($sa $sx)" [ "$sa $sx" = "0 0" ]

# --- 2e. A notice ends the job (USR1 to node 0's launcher): a newcomer that comes meanwhile is
# not admitted at once, and the job ends preempted (200) everywhere. Before, node 0 ended the
# round for it and the next ran as if no notice had come (the campaign's etcd 303: exit 0).
J=an
ARGS=(--nnodes 2:3 $(rdzv 29406 "notice-$$") --nproc-per-node 1 --admit-newcomers at-once
  --rdzv-last-call 1 --node-timeout 5 --notice-signal USR1)
for h in 0 1; do
  start $J $h no_env "${ARGS[@]}"
  sleep 0.3
done
for h in 0 1; do wait_file "$WORK/$J.rank.$h.0" 15; done
node0=$(host_with_rank $J 0 0)
kill -USR1 $(launcher_pids $J "$node0") 2>/dev/null
for h in 0 1; do wait_file "$WORK/$J.noticed.$h" 10; done
start $J 2 no_env "${ARGS[@]}"
for _ in $(seq 100); do grep -q "hot spare" "$WORK/$J.out.2" 2>/dev/null && break; sleep 0.05; done
sleep 3
touch "$WORK/$J.finish"
s0=$(wait_status $J 0 15); s1=$(wait_status $J 1 15); s2=$(wait_status $J 2 15)
check "a notice, then a newcomer: no round ends to admit it, all end preempted ($s0 $s1 $s2)" \
  bash -c "[ '$s0 $s1 $s2' = '200 200 200' ] && ! grep -q 'joined run round 1\|ends round 0 to admit' '$WORK'/$J.out.*" ||
  show $J
CMD=("$WORK/worker.sh")

# --- 3. torch gloo, a checkpoint each step, through a lost node: 3 nodes, then 2.
# --- Too few nodes: --nnodes 3:4 and two launchers. Node 0 gives up after --rdzv-timeout and
# tells the follower why; both fail naming the minimum and who came, and no worker starts.
J=tf
CMD=("$WORK/worker.sh")
ARGS=(--nnodes 3:4 $(rdzv 29403 "few-$$") --nproc-per-node 1
  --rdzv-timeout 3 --node-timeout 5)
start $J 0 no_env "${ARGS[@]}"
sleep 0.3
start $J 1 no_env "${ARGS[@]}"
s0=$(wait_status $J 0 30); s1=$(wait_status $J 1 30)
check "too few nodes (2 of min 3): both launchers fail ($s0 $s1), no worker started" bash -c \
  "[ -n '$s0' ] && [ '$s0' != 0 ] && [ -n '$s1' ] && [ '$s1' != 0 ] && ! ls '$WORK'/$J.rank.* >/dev/null 2>&1" ||
  show $J
check "too few nodes: node 0 says at least 3 nodes within --rdzv-timeout, only 2 came" \
  grep -q "at least 3 nodes within --rdzv-timeout 3 s.*only 2 came" "$WORK/$J.out.0" || show $J
check "too few nodes: the follower gets node 0's reason, not a timeout of its own" \
  grep -q "at least 3 nodes within --rdzv-timeout 3 s.*only 2 came" "$WORK/$J.out.1" || show $J

J=tc
if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
  CMD=(/usr/bin/python3 "$TRAIN" "$WORK/tc.checkpoint" 40 0.15)
  ARGS=(--nnodes 2:3 $(rdzv 29402 "torch-$$") --nproc-per-node 1
    --max-restarts 2 --rdzv-last-call 1 --node-timeout 10 --term-timeout 5)
  for h in 0 1 2; do
    start $J $h no_env "${ARGS[@]}"
    sleep 0.3
  done
  wait_checkpoint_step "$WORK/tc.checkpoint" 8
  kill_host $J 2
  s0=$(wait_status $J 0 120); s1=$(wait_status $J 1 10)
  check "torch gloo through a lost node: nodes 0 and 1 finish 0 ($s0 $s1)" \
    bash -c "[ '$s0' = 0 ] && [ '$s1' = 0 ]" || show $J
  check "torch gloo: all 40 steps counted once: total 40.0, the last round's world 2, resumed" \
    grep -q "done: 40 steps, total 40.0, last round's world 2, resumed at step [1-9]" "$WORK/tc.out.0" ||
    show $J
  check "torch gloo: round 0 had 3 ranks, round 1 had 2, resuming from the checkpoint" bash -c \
    "grep -q 'restart 0: rank 0 of 3 resumes at step 0' '$WORK/tc.out.0' &&
     grep -q 'restart 1: rank 0 of 2 resumes at step [1-9]' '$WORK/tc.out.0'"
else
  check "python3-torch is installed (scripts/install-deps.sh installs it)" false
fi

finish
