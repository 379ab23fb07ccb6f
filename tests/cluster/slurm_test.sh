#!/usr/bin/env bash
# aml-launch under a real Slurm on this one machine (slurm-wlm and munge from Debian): a
# private munged, slurmctld and slurmd of the test's own (their own socket, ports, state and
# spool in a temporary folder; stopped and removed at the end), with ProctrackType=
# proctrack/pgid — the tracking that only knows the tasks' process groups. One launcher per
# task (srun -n 2):
# - the ranks come from Slurm's variables; --summary-file s.{rank}.json gives one file a task;
# - scancel: every task's launcher reports a stop by SIGTERM (no "failed first"), in its own
#   summary file too;
# - scancel of an sbatch job with srun per task: each launcher says it was stopped (in a stderr
#   file of the task's own: Slurm drops a task's output once it has signalled the step);
# - scancel with workers whose children ignore TERM and call setsid: after Slurm's SIGKILL of
#   the tasks' process groups nothing of the job is left within 1 s;
# - tasks Slurm bound (task/affinity, srun --cpu-bind=map_cpu:1,0) keep Slurm's CPUs whatever
#   --bind asks: the placement leaves a scheduler's binding alone;
# - munge (AML_MUNGE_SOCKET: the test's munged): with no secret configured the ranks' launchers
#   authenticate with munge credentials; a stranger with a credential of the job's user is
#   admitted, one with another UID's (nobody's) refused, and the job runs to its end;
# - srun --signal=USR1@N before the time limit, with --notice-signal USR1: a notice of the job's
#   end that every worker reads; the job ends preempted (exit 200).
# usage: slurm_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/../blackbox/assert.sh"
. "$(dirname "$0")/slurm_common.sh"
for tool in munged slurmctld slurmd srun sbatch scancel squeue; do
  command -v $tool >/dev/null || { check "$tool is installed (slurm-wlm, munge)" false; finish; exit; }
done
D=$(mktemp -d /tmp/aml-slurm.XXXXXX)
chmod 700 "$D"
W="$D/work"
mkdir -p "$W" "$D/state" "$D/spool"
stop_cluster() {
  for daemon in slurmd slurmctld munged; do
    [ -f "$D/$daemon.pid" ] && kill "$(cat "$D/$daemon.pid")" 2>/dev/null
  done
  sleep 0.5
  for daemon in slurmd slurmctld munged; do
    [ -f "$D/$daemon.pid" ] && kill -KILL "$(cat "$D/$daemon.pid")" 2>/dev/null
  done
  pkill -KILL -f "MARK=aml-slurm-$$" 2>/dev/null
  rm -rf "$D"
}
trap stop_cluster EXIT

reserve_port ctld_port
reserve_port slurmd_port
host=$(hostname -s)
head -c 1024 /dev/urandom >"$D/munge.key"
chmod 400 "$D/munge.key"
munged -f --socket="$D/munge.sock" --key-file="$D/munge.key" --log-file="$D/munged.log" \
  --pid-file="$D/munged.pid" --seed-file="$D/munged.seed" || { cat "$D/munged.log"; }
{
  cat <<EOF
ClusterName=amltest
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmdSpoolDir=$D/spool
SlurmdPidFile=$D/slurmd.pid
SlurmdLogFile=$D/slurmd.log
NodeName=$host CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  slurm_common_conf "$D" task/affinity
} >"$D/slurm.conf"
export SLURM_CONF="$D/slurm.conf"
slurmctld -i && slurmd
up=0
for _ in $(seq 100); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && { up=1; break; }
  sleep 0.2
done
check "a private Slurm (proctrack/pgid) is up on $host" [ $up = 1 ] ||
  { tail -20 "$D"/slurm*.log; finish; exit; }

# --- Tasks Slurm bound: task 0 on CPU 1, task 1 on CPU 0 (the reverse of what --bind exclusive
# would give their local ranks); each worker keeps its task's CPU.
if [ "$(nproc --all)" -ge 2 ]; then
  srun -n 2 --cpu-bind=map_cpu:1,0 -J aml-bound env MARK="aml-slurm-$$" "$BIN" --no-group \
    --bind exclusive --tag none -- sh -c 'echo "$RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"' \
    >"$W/bound.out" 2>"$W/bound.err"
  check "srun --cpu-bind=map_cpu:1,0, --bind exclusive: rank 0 stays on CPU 1, rank 1 on CPU 0" \
    bash -c "[ \"\$(sort '$W/bound.out' | tr '\n' ' ')\" = '0 1 1 0 ' ]" || cat "$W/bound.out" "$W/bound.err"
  srun -n 2 --cpu-bind=map_cpu:1,0 -J aml-bound env MARK="aml-slurm-$$" "$BIN" --no-group \
    --bind exclusive --dry-run -- true >"$W/bound.dry" 2>&1
  check "--dry-run in a bound task says the scheduler bound it" \
    grep -q "placement:       none (the scheduler already bound this task (CPUs 1 of 0-1; SLURM_CPU_BIND_TYPE=map_cpu:)" "$W/bound.dry" ||
    cat "$W/bound.dry"
fi

# --- Slurm's warning before the time limit (srun -t 1 --signal=USR1@60): sent at slurmctld's
# next look at the time limits, up to 30 s away, so this job runs beside the cases below (one
# core of the two, as theirs: --overcommit) and is checked further down.
mkdir -p "$W/notice"
notice_t0=$(date +%s)
env W="$W/notice" MARK="aml-slurm-$$-notice" NOTICE_RUN_S=50 srun -N1 -n2 --overcommit -t 1 \
  --signal=USR1@60 -J aml-notice "$BIN" --notice-signal USR1 --summary-file "$W/notice.{rank}.json" \
  -- /usr/bin/python3 "$(dirname "$0")/../blackbox/notice_worker.py" \
  "$(dirname "$0")/../../python/aml_launch/_notice.py" >"$W/notice.out" 2>"$W/notice.err" &
notice_job=$!

# job NAME WORKER: srun -n 2 of aml-launch in the background, as job NAME; $job its srun.
job() {
  local name=$1 worker=$2
  rm -f "$W"/up.*
  env W="$W" MARK="aml-slurm-$$-$name" srun -N1 -n2 --overcommit -J "aml-$name" \
    "$BIN" --term-timeout 30 --summary-file "$W/$name.{rank}.json" -- sh -c "$worker" \
    >"$W/$name.out" 2>"$W/$name.err" &
  job=$!
}
until_up() {
  for _ in $(seq 300); do [ -e "$W/up.0" ] && [ -e "$W/up.1" ] && return 0; sleep 0.05; done
  return 1
}
left() { grep -l "MARK=aml-slurm-$$-$1" /proc/[0-9]*/environ 2>/dev/null | wc -l; }
cancel() { scancel "$(squeue -h -n "aml-$1" -o %i)"; }

# --- The ranks, from Slurm.
out=$(srun -N1 -n2 --overcommit "$BIN" --summary-file "$W/ranks.{rank}.json" -- \
  sh -c 'echo "rank=$RANK local=$LOCAL_RANK world=$WORLD_SIZE"' 2>&1)
check "srun -n 2: rank 0 and 1 of 2 ($(tr '\n' ' ' <<<"$out"))" bash -c \
  'grep -qx "rank=0 local=0 world=2" <<<"$1" && grep -qx "rank=1 local=1 world=2" <<<"$1"' _ "$out"
check "srun -n 2: one --summary-file a task (ranks.0.json, ranks.1.json)" \
  bash -c "[ -f '$W/ranks.0.json' ] && [ -f '$W/ranks.1.json' ]"

# --- One task fails, srun without -K: the tasks' launchers are one group (rank 0's serves the
# store), so the others stop within about a second, and srun returns the failing task's 9
# instead of waiting on its own timer.
rm -f "$W"/up.*
t0=$(date +%s%N)
env W="$W" MARK="aml-slurm-$$-fail" srun -N1 -n4 --overcommit -J aml-fail \
  "$BIN" --summary-file "$W/fail.{rank}.json" -- sh -c 'touch "$W/up.$RANK"
while [ "$(ls "$W"/up.* | wc -l)" -lt 4 ]; do sleep 0.02; done
if [ "$RANK" = 1 ]; then echo "task one gives up" >&2; exit 9; fi
exec sleep 120' >"$W/fail.out" 2>"$W/fail.err"
status=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "srun -n 4, task 1 exits 9: srun returns 9 ($status) after ${ms} ms (all started, under 5 s)" \
  bash -c "[ $status = 9 ] && [ $ms -lt 5000 ]" || cat "$W/fail.err"
check "srun -n 4, task 1 exits 9: every task's summary file says 9 and names rank 1" python3 -c '
import json, sys
for rank in range(4):
    s = json.load(open(f"{sys.argv[1]}/fail.{rank}.json"))
    assert s["exit_code"] == 9 and s["first_failure"]["rank"] == 1, s
    assert s["first_failure"]["stderr_tail"] == ["task one gives up"], s' "$W"
check "srun -n 4, task 1 exits 9: nothing is left" [ "$(left fail)" = 0 ]

# --- scancel: a stop of every task, not a failure.
job stop 'touch "$W/up.$RANK"; exec sleep 300'
until_up
cancel stop
wait $job
# Each gets Slurm's TERM; the one whose news came second names the first (one verdict). Whether
# its own TERM comes before it is done ("got one too") is Slurm's timing, not the launcher's.
check "scancel: each task's launcher reports a stop by SIGTERM, none a failure" bash -c \
  "[ \$(grep -c 'stopped by SIGTERM from outside\|stopped by SIGTERM sent to rank ' '$W/stop.err') = 2 ] && [ \$(grep -c 'stopped by SIGTERM from outside' '$W/stop.err') = 1 ] && ! grep -q 'failed first\|stderr was empty' '$W/stop.err'" ||
  cat "$W/stop.err"
check "scancel: each task's summary file says stopped by SIGTERM, exit 143" python3 -c '
import json, sys
for rank in (0, 1):
    s = json.load(open(f"{sys.argv[1]}/stop.{rank}.json"))
    assert s["exit_code"] == 143 and s["first_failure"] is None and s["stopped"]["signal"] == 15, s' "$W"

# --- scancel of an sbatch job whose script runs srun, a task per rank. Slurm (22.05) stops
# relaying a task's output once it has signalled the step: what the launchers say after
# their workers ended can be lost to the job's output (measured: lost in most runs, through
# srun's console and through srun -o alike). So each launcher's stop is checked where it does
# not depend on Slurm's relay: its own stderr (a file the task opens) and its summary file.
rm -f "$W"/up.*
cat >"$W/batch.sh" <<EOF
#!/bin/sh
srun -n2 --overcommit sh -c 'exec "$BIN" --summary-file "$W/batch.{rank}.json" -- sh -c "touch $W/up.\\\$RANK; exec sleep 300" 2>"$W/batch.\$SLURM_PROCID.err"'
EOF
env MARK="aml-slurm-$$-batch" sbatch -N1 -n2 --overcommit -J aml-batch -o "$W/batch.out" "$W/batch.sh" >/dev/null
until_up
cancel batch
for _ in $(seq 300); do [ -z "$(squeue -h -n aml-batch -o %i)" ] && break; sleep 0.1; done
check "sbatch + srun per task, scancel: each task's launcher says it was stopped by SIGTERM" bash -c \
  "cat '$W'/batch.[01].err | grep -c 'stopped by SIGTERM from outside\|stopped by SIGTERM sent to rank ' | grep -qx 2" ||
  cat "$W"/batch.[01].err "$W/batch.out"
check "sbatch + srun per task, scancel: each task's summary file has the stop, exit 143" python3 -c '
import json, sys
for rank in (0, 1):
    s = json.load(open(f"{sys.argv[1]}/batch.{rank}.json"))
    assert s["exit_code"] == 143 and s["stopped"]["signal_name"] == "SIGTERM", s' "$W"

# --- scancel of workers whose children ignore TERM, one in a session of its own: Slurm sends
# TERM, then (KillWait 2 s) SIGKILL to the tasks' process groups; nothing is left 1 s later.
job deaf 'trap "" TERM
(trap "" TERM; exec sleep 300) &
setsid sh -c "trap \"\" TERM; sleep 300" &
touch "$W/up.$RANK"
while :; do sleep 0.05; done'
until_up
before=$(left deaf)
cancel deaf
wait $job
# Slurm is done with the job once the tasks' process groups are gone (TERM, KillWait, SIGKILL).
for _ in $(seq 300); do [ -z "$(squeue -h -n aml-deaf -o %i)" ] && break; sleep 0.1; done
check "scancel, TERM ignored: Slurm ended the job" [ -z "$(squeue -h -n aml-deaf -o %i)" ]
sleep 1
check "scancel, TERM ignored (pgid tracking): of $before processes none is left 1 s after Slurm ended the job ($(left deaf))" \
  [ "$(left deaf)" = 0 ]

# --- Two steps of one allocation at once (a sweep; a train beside an eval) are two jobs: each
# has its own run id (JOB.STEP) and store port, so that neither meets the other's launchers.
rm -f "$W"/step.*
cat >"$W/steps.sh" <<'EOF'
#!/bin/sh
step() {
  srun --overlap -n2 --overcommit "$BIN" -- sh -c \
    'echo "$AML_LAUNCH_RUN_ID $MASTER_PORT" >"$W/step.$SLURM_STEP_ID.$RANK"; sleep 3' \
    >"$W/step.$1.out" 2>&1
  echo $? >"$W/step.$1.status.part" && mv "$W/step.$1.status.part" "$W/step.$1.status"
}
step a &
step b &
wait
EOF
env BIN="$BIN" W="$W" MARK="aml-slurm-$$-steps" sbatch -N1 -n2 --overcommit -J aml-steps \
  -o "$W/steps.out" "$W/steps.sh" >/dev/null
for _ in $(seq 600); do [ -e "$W/step.a.status" ] && [ -e "$W/step.b.status" ] && break; sleep 0.1; done
statuses=$(cat "$W/step.a.status" "$W/step.b.status" 2>/dev/null | tr '\n' ' ')
check "two steps of one allocation at once: both finish 0 ($statuses)" [ "$statuses" = "0 0 " ] ||
  cat "$W"/step.[ab].out
check "two steps: each has its own run id (JOB.STEP) and workers' port, for both its ranks" python3 -c '
import glob, os, sys
steps = {}
for path in glob.glob(sys.argv[1] + "/step.[0-9]*.[01]"):
    _, step, rank = os.path.basename(path).split(".")
    steps.setdefault(step, {})[rank] = open(path).read().split()
assert len(steps) == 2 and all(sorted(r) == ["0", "1"] for r in steps.values()), steps
for step, ranks in steps.items():
    assert ranks["0"] == ranks["1"] and ranks["0"][0].endswith("." + step), steps
ids = {r["0"][0] for r in steps.values()}
ports = {r["0"][1] for r in steps.values()}
assert len(ids) == 2 and len(ports) == 2, steps' "$W"
check "two steps: nothing is left" [ "$(left steps)" = 0 ]

# --- JAX (--framework jax): jax.distributed.initialize() with no arguments sees the launcher's
# workers, not Slurm's tasks (JAX's own Slurm detection would give both workers of one task
# process 0 of 1), per node and per task.
jax_job="$(dirname "$0")/../blackbox/jax_job.py"
jax_py=$(command -v python3)
out=$(env MARK="aml-slurm-$$-jax" TMPDIR="$W" srun -N1 -n1 -J aml-jax "$BIN" --framework jax --nproc-per-node 2 \
  -- "$jax_py" "$jax_job" 2>&1)
check "JAX per node (srun -n 1, --nproc-per-node 2): processes 0 and 1 of 2, psum 3 on both" bash -c \
  '[ $(grep -c "jax process [01] of 2 rank [01]" <<<"$1") = 2 ] && [ $(grep -c "psum 3.0" <<<"$1") = 2 ]' _ "$out" ||
  echo "$out"
out=$(env MARK="aml-slurm-$$-jax" TMPDIR="$W" srun -N1 -n2 --overcommit -J aml-jax "$BIN" --framework jax \
  -- "$jax_py" "$jax_job" 2>&1)
check "JAX per task (srun -n 2): processes 0 and 1 of 2, psum 3 on both" bash -c \
  '[ $(grep -c "jax process [01] of 2 rank [01]" <<<"$1") = 2 ] && [ $(grep -c "psum 3.0" <<<"$1") = 2 ]' _ "$out" ||
  echo "$out"
# --- A GPU a task (srun --gpus-per-task 1, on the 8-GPU fixture machine): each task's
# CUDA_VISIBLE_DEVICES is its own, set per task as Slurm's gres sets it (the real index, or 0
# under its cgroup device constraint); the task's GPU is that entry whatever its local rank.
/usr/bin/python3 "$(dirname "$0")/../fixtures/machines/make_machines.py" "$W/machines" >/dev/null
gpus_per_task() {  # gpus_per_task CVD_OF_TASK_EXPR: each task's GPU, as its --dry-run has it
  srun -N1 -n2 --overcommit sh -c "CUDA_VISIBLE_DEVICES=$1 AML_LAUNCH_MACHINE_ROOT='$W/machines/nd-h100-v5' \
    exec '$BIN' --no-group --bind node --dry-run --format json -- true" |
    python3 -c 'import json, sys
for text in sys.stdin.read().replace("}\n{", "}\x00{").split("\x00"):
    plan = json.loads(text)
    print(plan["workers"][0]["placement"]["gpu"])' | sort | tr '\n' ' '
}
got=$(gpus_per_task '$((SLURM_LOCALID + 4))')
check "srun per task, CUDA_VISIBLE_DEVICES 4 and 5 (the real index): GPUs 4 and 5 ($got)" \
  [ "$got" = "0005:00:00.0 0006:00:00.0 " ]
got=$(gpus_per_task 0)
check "srun per task, CUDA_VISIBLE_DEVICES 0 (a cgroup's): each task its device 0 ($got)" \
  [ "$got" = "0001:00:00.0 0001:00:00.0 " ]

# --- Munge: nothing configured but the cluster's munged, and only the job's user gets in.
export AML_MUNGE_SOCKET="$D/munge.sock"
modes=$(srun -N1 -n2 --overcommit "$BIN" --dry-run --format json -- true |
  python3 -c 'import json, sys; print(" ".join(json.loads(l)["auth"]["mode"] for l in sys.stdin.read().replace("}\n{", "}\x00{").split("\x00")))')
check "srun -n 2 --dry-run, no secret: munge ($modes)" [ "$modes" = "munge munge" ]
reserve_port port
rm -f "$W"/up.*
env W="$W" MARK="aml-slurm-$$-munge" srun -N1 -n2 --overcommit -J aml-munge "$BIN" --master-addr 127.0.0.1 \
  --master-port "$port" --run-id munge-job -- sh -c 'touch "$W/up.$RANK"; echo "auth=$AML_LAUNCH_STORE_AUTH"; sleep 5' \
  >"$W/munge.out" 2>"$W/munge.err" &
job=$!
until_up
stranger="$(dirname "$0")/../blackbox/store_stranger.py"
out=$(/usr/bin/python3 "$stranger" munge 127.0.0.1 "$port" munge-job 2>&1)
check "a client with a munge credential of the job's user is admitted ($out)" [ "$out" = admitted ]
chmod 711 "$D"  # nobody reaches the munged socket inside
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "$stranger" munge 127.0.0.1 "$port" munge-job 2>&1)
check "a client with another UID's munge credential is refused ($out)" \
  grep -q "refused: a munge credential of UID 65534, not of the job's user" <<<"$out"
wait $job; status=$?
check "the munge job runs to its end ($status): both ranks' workers had munge, no warning" bash -c \
  "[ $status = 0 ] && [ \$(grep -c '^auth=munge$' '$W/munge.out') = 2 ] && ! grep -q 'anyone who reaches' '$W/munge.err'" ||
  cat "$W/munge.out" "$W/munge.err"
check "rank 0's launcher said it refused UID 65534's credential" \
  grep -q "refused a connection from 127.0.0.1: a munge credential of UID 65534" "$W/munge.err"

# --- Slurm's warning before the time limit (started above): every task's launcher took it as
# a notice (--notice-signal USR1), every worker was told and exited 0 after reading it, and the
# job ended preempted (200).
wait "$notice_job"
status=$?
check "srun --signal=USR1@60: both workers read the notice, srun returns 200 ($status, after $(($(date +%s) - notice_t0)) s)" \
  bash -c "[ $status = 200 ] && grep -q '^signal signal ' '$W/notice/got.0' && grep -q '^signal signal ' '$W/notice/got.1'" ||
  { cat "$W/notice.err" "$W/notice.out"; }
check "srun --signal=USR1@60: each task's summary names the signal's notice" python3 -c '
import json, sys
for rank in (0, 1):
    s = json.load(open(f"{sys.argv[1]}/notice.{rank}.json"))
    assert s["exit_code"] == 200 and s["notice"]["kind"] == "signal" and s["notice"]["preempted"], s' "$W"

finish
