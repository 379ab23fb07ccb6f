#!/usr/bin/env bash
# Black-box tests of containment that outlives the launcher (DESIGN §4): after SIGKILL of
# aml-launch, of its process group (as Open MPI and Slurm's pgid tracking send), or of its
# supervisor, every process it started is gone within 1 s: the workers, children that ignore
# TERM, ones that called setsid, ones behind a shell wrapper; a supervisor that crashes says
# so with its stack. Also as an unprivileged user, as
# PID 1 of a PID namespace, and under a real mpirun that is stopped.
# usage: containment_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
trap 'pkill -KILL -f "aml-containment-$$" 2>/dev/null; rm -rf "$WORK"' EXIT

# Each worker: a shell wrapper whose children ignore TERM, one of them in a session of its
# own (setsid), one a daemon's grandchild; the worker itself ignores TERM too.
worker='trap "" TERM
(trap "" TERM; exec sleep 300) &
setsid sh -c "trap \"\" TERM; sleep 300" &
(sh -c "sleep 300 &") &
touch "$W/up.$RANK"
while :; do sleep 0.05; done'

# left MARK: how many processes carry the marker in their environment.
left() { grep -l "MARK=$1" /proc/[0-9]*/environ 2>/dev/null | wc -l; }
# gone_within_ms MARK MS: polls until no process of the marker is left; $gone_ms how long.
gone_within_ms() {
  local t0 deadline=$(($(date +%s%N) + $2 * 1000000))
  t0=$(date +%s%N)
  while [ "$(left "$1")" != 0 ]; do
    [ "$(date +%s%N)" -ge $deadline ] && { gone_ms=never; return 1; }
    sleep 0.02
  done
  gone_ms=$((($(date +%s%N) - t0) / 1000000))
}
# cleanup MARK: after a check, whatever a failing launcher left is killed here, so that one
# failure neither hangs the test nor spills into the next check.
cleanup() { grep -l "MARK=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | xargs -r kill -KILL 2>/dev/null; }
until_up() {
  for _ in $(seq 200); do [ -e "$WORK/up.0" ] && [ -e "$WORK/up.1" ] && return 0; sleep 0.05; done
  return 1
}
# start_job MARK [LAUNCHER_PREFIX...]: two workers as above; $launcher is the pid the caller
# holds (setsid execs in place: it is a process group leader of its own).
start_job() {
  local mark=$1; shift
  rm -f "$WORK"/up.*
  env -i PATH=/usr/bin:/bin W="$WORK" MARK="$mark" "$@" "$BIN" --nproc-per-node 2 \
    --term-timeout 30 -- sh -c "$worker" >/dev/null 2>"$WORK/$mark.err" &
  launcher=$!
  until_up
}

# kill_and_check MARK WHAT TARGET: SIGKILL to TARGET (a pid, or -PGID); every process the job
# started must be gone within 1 s.
kill_and_check() {
  local mark=$1 what=$2 before
  before=$(left "$mark")
  kill -KILL -- "$3"
  gone_within_ms "$mark" 1000
  check "$what: the $before processes are gone within 1 s ($gone_ms ms)" [ "$gone_ms" != never ]
  cleanup "$mark"
  wait $launcher 2>/dev/null
}

# --- SIGKILL of the launcher alone: the process the scheduler (or a user's kill -9) holds.
mark="aml-containment-$$-alone"
start_job "$mark"
kill_and_check "$mark" "kill -9 of aml-launch" $launcher
check "kill -9 of aml-launch: its supervisor said so" \
  grep -q "its launcher was killed (SIGKILL) at .*: its workers and everything they started were killed at once" "$WORK/$mark.err"

# --- The same as an unprivileged user: no capability, cgroup or namespace is needed.
mark="aml-containment-$$-nobody"
chmod 777 "$WORK"
start_job "$mark" setpriv --reuid=nobody --regid=nogroup --clear-groups
check "as nobody: the workers run as nobody" bash -c "[ \"\$(stat -c %U '$WORK/up.0')\" = nobody ]"
kill_and_check "$mark" "as nobody, kill -9 of aml-launch" $launcher

# --- SIGKILL of its whole process group, as mpirun and Slurm (proctrack/pgid) send it.
mark="aml-containment-$$-group"
start_job "$mark" setsid
check "the launcher leads a process group of its own here" \
  bash -c "[ \"\$(ps -o pgid= -p $launcher | tr -d ' ')\" = $launcher ]"
kill_and_check "$mark" "kill -9 of aml-launch's process group" -$launcher

# --- SIGKILL of the supervisor (the OOM killer's choice, or a user's kill -9 of the other
# aml-launch process): the guardian ends everything it left and exits 137.
mark="aml-containment-$$-supervisor"
start_job "$mark"
supervisor=$(pgrep -P $launcher -x aml-launch)
check "the launcher's supervisor is a child of it (${supervisor:-none})" [ -n "$supervisor" ]
before=$(left "$mark")
kill -KILL "${supervisor:-$launcher}"
gone_within_ms "$mark" 1000
cleanup "$mark"
wait $launcher
status=$?
check "kill -9 of the supervisor: the $before processes are gone within 1 s ($gone_ms ms), exit 137 ($status)" \
  bash -c "[ '$gone_ms' != never ] && [ $status = 137 ]"
check "kill -9 of the supervisor: the guardian said so" \
  grep -q "its supervisor (pid $supervisor) was killed by signal 9 (SIGKILL); its guardian ended the" "$WORK/$mark.err"

# --- The supervisor crashes as its workers start (a failpoint's bad memory access): it says so
# with its stack, whose frames addr2line names; its guardian ends everything it left, and the
# launcher exits as the supervisor died, 139.
mark="aml-containment-$$-crash"
env -i PATH=/usr/bin:/bin W="$WORK" MARK="$mark" \
  AML_LAUNCH_TEST_FAILPOINT="workers-started:$WORK/crash.fired:segv" "$BIN" --nproc-per-node 2 \
  -- sh -c "$worker" >/dev/null 2>"$WORK/$mark.err" &
launcher=$!
(sleep 20; cleanup "$mark") &  # a launcher that would wait for ever
watchdog=$!
wait $launcher
status=$?
gone_within_ms "$mark" 1000
kill $watchdog 2>/dev/null
cleanup "$mark"
if grep -qa "AddressSanitizer" "$BIN"; then
  # The sanitizer build keeps ASan's own report (symbolized), and ends as ASan does (exit 1).
  check "a crash of the supervisor (sanitizer build): ASan's report names the failpoint in the round, exit $status, nothing left ($gone_ms ms)" \
    bash -c "[ $status != 0 ] && [ '$gone_ms' != never ] &&
             grep -q 'AddressSanitizer: SEGV on unknown address 0x0*8 ' '$WORK/$mark.err' &&
             grep -q 'in aml::failpoint' '$WORK/$mark.err' && grep -q 'in aml::Round::run' '$WORK/$mark.err'" ||
    cat "$WORK/$mark.err"
else
  frames=$(grep -o "aml-launch(+0x[0-9a-f]*)" "$WORK/$mark.err" | sed 's/.*(+\(0x[0-9a-f]*\))/\1/')
  check "a crash of the supervisor: exit 139 ($status), nothing left ($gone_ms ms)" \
    bash -c "[ $status = 139 ] && [ '$gone_ms' != never ]"
  check "a crash of the supervisor: it says what and where, then its stack" \
    grep -q "internal error: the launcher (pid [0-9]*) crashed: SIGSEGV at address 0x8 (aml-launch .*commit" "$WORK/$mark.err" ||
    cat "$WORK/$mark.err"
  check "a crash of the supervisor: addr2line names its frames (the failpoint, the round)" \
    bash -c "addr2line -f -C -e '$BIN' $(echo $frames) | grep -q '^aml::failpoint' &&
             addr2line -f -C -e '$BIN' $(echo $frames) | grep -q '^aml::Round::run'" ||
    addr2line -f -C -e "$BIN" $frames
  check "a crash of the supervisor: its guardian names the signal" \
    grep -q "its supervisor (pid [0-9]*) was killed by signal 11 (SIGSEGV); its guardian ended the" "$WORK/$mark.err"
fi

# --- SIGKILL of a paused launcher (SIGSTOP to a host's processes, as a paused VM looks): its
# supervisor's process group, left orphaned with a stopped member, gets the kernel's SIGHUP and
# SIGCONT. That is the launcher's loss, not a stop by SIGHUP (an elastic job's nodes would all
# have stopped for it: the campaigns' incarnations that ended 129).
mark="aml-containment-$$-paused"
start_job "$mark"
supervisor=$(pgrep -P $launcher -x aml-launch)
kill -STOP $launcher ${supervisor:-}
kill_and_check "$mark" "kill -9 of a paused aml-launch" $launcher
check "kill -9 of a paused aml-launch: its supervisor named the kill, not the kernel's SIGHUP" \
  bash -c "grep -q 'its launcher was killed (SIGKILL)' '$WORK/$mark.err' && ! grep -q SIGHUP '$WORK/$mark.err'"

# --- The launcher's own exit paths keep their grace: TERM gives TERM-ignoring workers
# --term-timeout (here 1 s), then SIGKILL; nothing is left afterwards.
mark="aml-containment-$$-term"
rm -f "$WORK"/up.*
env -i PATH=/usr/bin:/bin W="$WORK" MARK="$mark" "$BIN" --nproc-per-node 2 --term-timeout 1 \
  -- sh -c "$worker" >/dev/null 2>&1 &
launcher=$!
until_up
t0=$(date +%s%N)
kill -TERM $launcher
(sleep 20; cleanup "$mark") &  # a launcher that would wait for ever
wait $launcher
status=$?
took_ms=$((($(date +%s%N) - t0) / 1000000))
check "TERM: the grace first (${took_ms} ms >= 1 s), 143 ($status), nothing left ($(left "$mark"))" \
  bash -c "[ $took_ms -ge 900 ] && [ $status = 143 ] && [ $(left "$mark") = 0 ]"

# --- As PID 1 of a PID namespace (a container): there is no guardian; SIGKILL from outside
# ends the namespace, and the kernel kills everything in it.
mark="aml-containment-$$-pid1"
rm -f "$WORK"/up.*
env -i PATH=/usr/bin:/bin W="$WORK" MARK="$mark" unshare --pid --fork --mount-proc --kill-child \
  "$BIN" --nproc-per-node 2 -- sh -c "$worker" >/dev/null 2>&1 &
job=$!
until_up
pid1=$(pgrep -P $job -f "$BIN" | head -1)
check "as PID 1: no guardian (one aml-launch process)" bash -c "[ -n '$pid1' ] && [ -z \"\$(pgrep -P $pid1 -x aml-launch)\" ]"
before=$(left "$mark")
kill -KILL "$pid1"
gone_within_ms "$mark" 1000
check "as PID 1, kill -9: the $before processes are gone within 1 s ($gone_ms ms)" [ "$gone_ms" != never ]
cleanup "$mark"
wait $job 2>/dev/null

# --- Under a real mpirun, one launcher per rank: mpirun stopped with TERM sends TERM, then
# SIGKILL to each rank's process group; nothing of the job is left on this host.
if command -v mpirun >/dev/null; then
  mark="aml-containment-$$-mpirun"
  rm -f "$WORK"/up.*
  env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" W="$WORK" MARK="$mark" OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 -x W -x MARK \
    "$BIN" -- sh -c "$worker" >"$WORK/mpirun.out" 2>&1 &
  job=$!
  until_up
  before=$(left "$mark")
  kill -TERM $job
  wait $job 2>/dev/null
  gone_within_ms "$mark" 1000
  cleanup "$mark"
  check "mpirun stopped (TERM, then its SIGKILL of each rank's group): the $before processes are gone ($gone_ms ms after mpirun)" \
    [ "$gone_ms" != never ]
else
  check "mpirun is installed (Open MPI)" false
fi
finish
