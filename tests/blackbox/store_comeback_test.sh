#!/usr/bin/env bash
# A node 0 that comes back (DESIGN §5): an elastic job on node 0's store, three namespace hosts
# (tests/cluster/netns_cluster.sh) with a Kubeflow elasticPolicy's environment (PET_NNODES=2:3).
# 1. Node 0's launcher SIGKILLed and started again 2 s later on the same host (a restarted pod):
#    the survivors keep their places and node ranks, the new node 0 takes the round and the
#    restarts used from them, the job goes on and ends 0 everywhere.
# 2. Node 0's launcher SIGKILLed and not started again: the survivors fail after --rdzv-timeout,
#    naming node 0's store and suggesting the etcd backend.
# usage: store_comeback_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
NET="cb$$"
HOSTS=3
MARK="aml-comeback-$$"
trap 'kill_marked_processes "$MARK"; bash "$CLUSTER" down "$NET" $HOSTS
      [ -n "${AML_TEST_KEEP:-}" ] || rm -rf "$WORK"' EXIT
netns_up "$CLUSTER" "$NET" $HOSTS || { finish; exit; }
MASTER=$(bash "$CLUSTER" addr 0)

cat >"$WORK/worker.sh" <<'EOS'
#!/bin/sh
r=$TORCHELASTIC_RESTART_COUNT
echo "round $r rank $RANK/$WORLD_SIZE node $GROUP_RANK/$GROUP_WORLD_SIZE"
[ "$LOCAL_RANK" = 0 ] && { echo "$GROUP_RANK $GROUP_WORLD_SIZE $TORCHELASTIC_RESTART_COUNT" >"$W/$JOB.rank.$HOST_ID.$r.part" &&
  mv "$W/$JOB.rank.$HOST_ID.$r.part" "$W/$JOB.rank.$HOST_ID.$r"; }  # whole or not there
while :; do
  [ -e "$W/$JOB.finish" ] && exit 0
  sleep 0.05
done
EOS
chmod +x "$WORK/worker.sh"

# start JOB HOST TRY ARGS...: host HOST's launcher (its TRY-th start) in the background
start() {
  local job=$1 host=$2 try=$3
  shift 3
  (
    bash "$CLUSTER" exec "$NET" "$host" env -i PATH=/usr/bin:/bin W="$WORK" JOB="$job" \
      HOST_ID="$host" AML_TEST_MARK="$MARK" LAUNCHER="$MARK-$job-$host" \
      PET_NNODES=2:3 PET_RDZV_BACKEND=c10d PET_RDZV_ENDPOINT="$MASTER:29400" \
      PET_RDZV_ID="job-$job-$$" PET_MAX_RESTARTS=3 PET_NPROC_PER_NODE=1 "$BIN" "$@" \
      -- "$WORK/worker.sh" >"$WORK/$job.out.$host.$try" 2>&1
    write_status "$WORK/$job.status.$host.$try" $?  # wait_status JOB HOST.TRY
  ) 2>/dev/null &
}
# The launcher's processes (its guardian and its supervisor) at once, as a lost pod's: a
# SIGKILL the guardian lives to see is a stop of the job, not a loss.
kill_launcher() {
  local p pids=""
  for p in $(grep -l -s -a "LAUNCHER=$MARK-$1-$2\b" /proc/[0-9]*/environ | cut -d/ -f3); do
    [ "$(readlink /proc/$p/exe)" = "$BIN" ] && pids="$pids $p"
  done
  kill -KILL $(echo $pids | tr ' ' '\n' | sort -rn) 2>/dev/null
}

# Each round here has all three nodes (MAX), and starts the moment the third joins: a last call
# long enough for a third launcher slow to start on a loaded machine (the sanitizer build's),
# which with 1 s came after round 0 had begun with two and waited as a spare.
ARGS=(--rdzv-last-call 10 --node-timeout 5)
# --- 1. Node 0 comes back.
J=back
for h in 0 1 2; do
  start $J $h 1 "${ARGS[@]}" --rdzv-timeout 15
  sleep 0.3
done
for h in 0 1 2; do wait_file "$WORK/$J.rank.$h.0" 20; done
check "node 0's store: three nodes make round 0" bash -c "[ \"\$(ls '$WORK'/$J.rank.*.0 | wc -l)\" = 3 ]" ||
  show $J
r1=$(rank_of $J 1 0); r2=$(rank_of $J 2 0)
kill_launcher $J 0
sleep 2
start $J 0 2 "${ARGS[@]}" --rdzv-timeout 15
for h in 0 1 2; do wait_file "$WORK/$J.rank.$h.1" 30; done
check "node 0 SIGKILLed and started again 2 s later: round 1 runs with all three nodes" \
  bash -c "[ \"\$(ls '$WORK'/$J.rank.*.1 2>/dev/null | wc -l)\" = 3 ]" || show $J
check "the survivors keep their node ranks ($r1 $r2), the new node 0 is node 0" \
  bash -c "[ '$(rank_of $J 1 1) $(rank_of $J 2 1) $(rank_of $J 0 1)' = '$r1 $r2 0' ]" || show $J
check "the survivors said they keep their place and wait for node 0's store" \
  grep -q "node 0's store at $MASTER:29400 went away or stopped answering this node (node 0 lost, or this node cut off or paused past --node-timeout); this node keeps its place (node rank $r1)" \
  "$WORK/$J.out.1.1" || show $J
check "the new node 0 says it took the round and the restarts from the survivors" \
  grep -q "node 0 came back: the survivors resume round 1 with 1 restart(s) used" "$WORK/$J.out.0.2" ||
  show $J
touch "$WORK/$J.finish"
statuses="$(wait_status $J 0.2 20) $(wait_status $J 1.1 20) $(wait_status $J 2.1 20)"
check "the job goes on and ends 0 on every node ($statuses)" [ "$statuses" = "0 0 0" ] || show $J

# --- 2. Node 0 does not come back.
J=gone
# --rdzv-timeout 15 s, as in part 1: round 0 meets within it on a loaded machine under the
# sanitizers too (4 s did not, once, nor 8 s in a CI run, it seems: the test took the 79 s of
# three rank files waited for in vain; a launcher came after round 0 had given up).
for h in 0 1 2; do
  start $J $h 1 "${ARGS[@]}" --rdzv-timeout 15
  sleep 0.3
done
for h in 0 1 2; do wait_file "$WORK/$J.rank.$h.0" 20; done
check "node 0 not started again: round 0 runs on all three nodes first" \
  bash -c "[ -e '$WORK/$J.rank.0.0' ] && [ -e '$WORK/$J.rank.1.0' ] && [ -e '$WORK/$J.rank.2.0' ]" || show $J
t0=$(date +%s%N)
kill_launcher $J 0
s1=$(wait_status $J 1.1 50); s2=$(wait_status $J 2.1 5)
ms=$((($(date +%s%N) - t0) / 1000000))
check "node 0 not started again: the survivors fail after --rdzv-timeout 15 s ($s1 $s2 after $ms ms)" \
  bash -c "[ -n '$s1' ] && [ '$s1' != 0 ] && [ -n '$s2' ] && [ '$s2' != 0 ] && [ $ms -ge 14800 ] && [ $ms -lt 40000 ]" ||
  show $J
check "node 0 not started again: they name node 0's store and suggest etcd" \
  grep -q "node 0's store at $MASTER:29400.*come back within --rdzv-timeout 15 s.*--rdzv-backend etcd" \
  "$WORK/$J.out.1.1" || show $J

kill_marked_processes "$MARK"
finish
