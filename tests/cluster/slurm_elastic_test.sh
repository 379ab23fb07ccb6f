#!/usr/bin/env bash
# An elastic job under a real Slurm of three nodes: slurm-wlm and munge from Debian, a private
# munged, a slurmctld on node 0 and one slurmd per node, each node a network namespace of its own
# (tests/cluster/netns_cluster.sh: its own address, the nodes' names in its hosts file).
# `srun -N 3 aml-launch --nnodes 2:2`: two nodes run, the third waits as a hot spare; one running
# node's task is killed (kill -9 of the pid srun started: its launcher alone, a lost node, not a
# stop of the job); the spare takes its node rank and the job finishes.
# usage: slurm_elastic_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
. "$HERE/slurm_common.sh"
for tool in munged slurmctld slurmd srun sinfo; do
  command -v $tool >/dev/null || { check "$tool is installed (slurm-wlm, munge)" false; finish; exit; }
done
CLUSTER="$HERE/netns_cluster.sh"
NET="se$$"
NODES=3
D=$(mktemp -d /tmp/aml-slurm-elastic.XXXXXX)
chmod 755 "$D"
W="$D/work"
mkdir -p "$W" "$D/state" "$D/spool"
# A command on node I: in its network namespace, with its hosts file, but the machine's /sys
# (slurmd wants the cgroup file systems there; ip netns exec would mount a sysfs of its own).
on() {
  local i=$1
  shift
  nsenter --net="/var/run/netns/$NET-$i" unshare --mount sh -c \
    'mount --bind "$0" /etc/hosts && exec "$@"' "$(bash "$CLUSTER" hosts "$NET" "$i")" "$@"
}
stop_cluster() {
  pkill -KILL -f "MARK=aml-slurm-elastic-$$" 2>/dev/null
  for f in "$D"/slurmd.*.pid "$D/slurmctld.pid" "$D/munged.pid"; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 0.5
  for f in "$D"/slurmd.*.pid "$D/slurmctld.pid" "$D/munged.pid"; do
    [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
  done
  bash "$CLUSTER" down "$NET" $NODES
  rm -rf "$D"
}
trap stop_cluster EXIT
if ! bash "$CLUSTER" up "$NET" $NODES 2>"$D/up.err"; then
  cat "$D/up.err"
  check "network namespaces can be made (ip netns, veth, bridge)" false
  finish; exit
fi

head -c 1024 /dev/urandom >"$D/munge.key"
chmod 400 "$D/munge.key"
munged -f --socket="$D/munge.sock" --key-file="$D/munge.key" --log-file="$D/munged.log" \
  --pid-file="$D/munged.pid" --seed-file="$D/munged.seed"
{
  cat <<EOF
ClusterName=amlelastic
SlurmctldHost=$(hostname -s)($(bash "$CLUSTER" addr 0))
SlurmctldPort=6817
SlurmdPort=6818
SlurmdSpoolDir=$D/spool/%n
SlurmdPidFile=$D/slurmd.%n.pid
SlurmdLogFile=$D/slurmd.%n.log
EOF
  slurm_common_conf "$D"
  for i in $(seq 0 $((NODES - 1))); do
    echo "NodeName=${NET}n$i NodeAddr=$(bash "$CLUSTER" addr "$i") CPUs=2 State=UNKNOWN"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
} >"$D/slurm.conf"
export SLURM_CONF="$D/slurm.conf"
on 0 slurmctld -i
for i in $(seq 0 $((NODES - 1))); do
  mkdir -p "$D/spool/${NET}n$i"
  on "$i" slurmd -N "${NET}n$i"
done
up=0
for _ in $(seq 60); do
  [ "$(on 0 sinfo -h -N -o '%N %T' 2>/dev/null | grep -c idle)" = $NODES ] && { up=1; break; }
  sleep 0.5
done
check "a private Slurm of $NODES nodes (one slurmd per network namespace) is up" [ $up = 1 ] ||
  { on 0 sinfo -N 2>&1; tail -n 5 "$D"/slurm*.log; finish; exit; }

# Each worker notes its node rank and world for its round; runs until $W/finish.
cat >"$W/worker.sh" <<'EOF'
#!/bin/sh
f="$W/rank.$SLURMD_NODENAME.$AML_LAUNCH_RESTART_COUNT"
echo "$GROUP_RANK $WORLD_SIZE" >"$f.part" && mv "$f.part" "$f"  # whole or not there
while [ ! -e "$W/finish" ]; do sleep 0.05; done
echo done >"$W/done.$SLURMD_NODENAME.$AML_LAUNCH_RESTART_COUNT"
EOF
chmod +x "$W/worker.sh"
on 0 env W="$W" MARK="aml-slurm-elastic-$$" srun -N $NODES -n $NODES -J aml-elastic \
  "$BIN" --nnodes 2:2 --max-restarts 1 --rdzv-last-call 1 --node-timeout 10 -- "$W/worker.sh" \
  >"$W/srun.out" 2>"$W/srun.err" &
srun_pid=$!
rounds() { ls "$W" | grep -c "^rank\..*\.$1\$"; }
for _ in $(seq 300); do [ "$(rounds 0)" = 2 ] && grep -q "hot spare" "$W/srun.err" && break; sleep 0.1; done
check "srun -N 3 aml-launch --nnodes 2:2: two nodes run round 0, the third waits as a hot spare" \
  bash -c "[ $(rounds 0) = 2 ] && grep -q 'hot spare' '$W/srun.err'" || cat "$W/srun.err"
members=$(ls "$W" | grep '^rank\..*\.0$' | cut -d. -f2 | sort | tr '\n' ' ')
victim=""
for node in $members; do
  [ "$(cut -d' ' -f1 "$W/rank.$node.0")" = 1 ] && victim=$node
done
spare=$(for i in $(seq 0 $((NODES - 1))); do echo "${NET}n$i"; done | grep -v -x -F "$(tr ' ' '\n' <<<"$members")")
# The victim's launcher as srun started it (its task's pid, the launcher's guardian: the
# aml-launch process whose parent is slurmstepd), killed alone: a lost node, not a stop of the
# job (its supervisor ends the node's workers and goes, as a lost node's would).
pids=$(grep -l -s "SLURMD_NODENAME=$victim" /proc/[0-9]*/environ | cut -d/ -f3 | while read -r p; do
  [ "$(readlink "/proc/$p/exe")" = "$BIN" ] && echo "$p"; done)
task=""
for p in $pids; do
  parent=$(ps -o ppid= -p "$p" | tr -d ' ')
  [ "$(readlink "/proc/$parent/exe" 2>/dev/null)" = "$BIN" ] || task=$p
done
check "node $victim's task is its launcher's guardian ($task)" [ -n "$task" ]
kill -KILL $task 2>/dev/null
for _ in $(seq 300); do [ -e "$W/rank.$spare.1" ] && break; sleep 0.1; done
check "node $victim's task (its launcher alone) killed: the spare ($spare) takes node rank 1 in round 1" \
  bash -c "[ \"\$(cat '$W/rank.$spare.1' 2>/dev/null)\" = '1 2' ]" || cat "$W/srun.err"
touch "$W/finish"
wait $srun_pid
status=$?
# srun reports the killed task (Killed) and exits with its status; every other task exited 0
# (srun names any that did not), and both workers of round 1 ended well.
check "the job finishes: round 1's workers on node 0 and the spare end well, the other tasks exit 0" \
  bash -c "[ -e '$W/done.${NET}n0.1' ] && [ -e '$W/done.$spare.1' ] && [ $status = 137 ] &&
           [ \$(grep -c 'srun: error' '$W/srun.err') = 1 ] &&
           grep -q 'srun: error: $victim: task .*: \\(Killed\\|Exited with exit code 137\\)' '$W/srun.err'" ||
  { echo "srun exited $status"; cat "$W/srun.err"; ls "$W"; }
check "nothing of the job is left" \
  bash -c "! grep -l -s 'MARK=aml-slurm-elastic-$$' /proc/[0-9]*/environ >/dev/null"
finish
