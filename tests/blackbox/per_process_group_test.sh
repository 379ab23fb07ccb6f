#!/usr/bin/env bash
# Per-process launches form one group (DESIGN §5): where the scheduler starts one aml-launch
# per rank (torch env:// variables here, as Azure ML per-process and any env:// launcher set
# them), rank 0's launcher serves the store on MASTER_PORT, the workers get that port too (torch's
# door shares the socket), and the first failure stops every rank within 1 s, every launcher exiting with its
# status. --no-group keeps each rank alone.
# usage: per_process_group_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
NET="pp$$"
trap 'kill -KILL $(pgrep -f "aml-ppgroup-$$") 2>/dev/null; bash "$CLUSTER" down "$NET" 2; rm -rf "$WORK"' EXIT
py=/usr/bin/python3
port() { $py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ranks NAME WORKER [FLAGS...]: 4 launchers, one per rank, as a per-process scheduler starts
# them; $pids[r] each rank's launcher. The worker sees $W and writes $W/up.$RANK when it runs.
ranks() {
  local name=$1 worker=$2
  shift 2
  P=$(port)
  rm -f "$WORK"/up.* "$WORK"/port.*
  for r in 0 1 2 3; do
    env -i PATH=/usr/bin:/bin W="$WORK" MARK="aml-ppgroup-$$-$name-$r" MASTER_ADDR=127.0.0.1 \
      MASTER_PORT="$P" WORLD_SIZE=4 RANK=$r LOCAL_RANK=$r LOCAL_WORLD_SIZE=4 \
      "$BIN" --rdzv-timeout 20 "$@" -- sh -c "$worker" >"$WORK/$name.$r.out" 2>"$WORK/$name.$r.err" &
    pids[r]=$!
  done
  workers_up 4
}
up='echo "$MASTER_PORT $AML_LAUNCH_STORE" > "$W/port.$RANK"; touch "$W/up.$RANK"'
all_up='while [ "$(ls "$W"/up.* | wc -l)" -lt 4 ]; do sleep 0.02; done'

# --- Rank 1 fails with 9: every rank stops within 1 s, every launcher exits 9 naming rank 1.
ranks fail "$up; if [ \$RANK = 1 ]; then $all_up; echo 'rank one gives up' >&2; exit 9; fi; exec sleep 60" ||
  check "the four ranks' workers started" false
t0=$(date +%s%N)
wait_launchers 4
check "rank 1 exits 9: every launcher exits 9 ($s0 $s1 $s2 $s3)" [ "$s0 $s1 $s2 $s3" = "9 9 9 9" ]
check "rank 1 exits 9: all stopped within 1 s ($ms0 $ms1 $ms2 $ms3 ms)" \
  bash -c "[ $ms0 -lt 1000 ] && [ $ms2 -lt 1000 ] && [ $ms3 -lt 1000 ]"
named=0
for r in 0 2 3; do
  grep -q "rank $r (node 0) stopped its worker: the job failed on this node: rank 1 (local rank 1) on node 0" \
    "$WORK/fail.$r.err" && grep -q 'rank one gives up' "$WORK/fail.$r.err" && named=$((named + 1))
done
check "every other launcher names rank 1 and its stderr ($named of 3)" [ $named = 3 ] ||
  cat "$WORK"/fail.*.err
read -r port0 store0 <"$WORK/port.0"
check "the workers got the job's MASTER_PORT ($port0), where rank 0's launcher serves theirs beside the launchers' store ($P)" bash -c \
  "[ '$port0' = '$P' ] && [ \$(cat '$WORK'/port.* | sort -u | wc -l) = 1 ]"
check "the workers are told where the store is ($store0)" [ "$store0" = "127.0.0.1:$P" ]
check "rank 0 alone says that the ranks met" bash -c \
  "grep -q 'the launchers of all 4 ranks joined' '$WORK/fail.0.err' && ! grep -q joined '$WORK/fail.2.err'"

# --- Every rank succeeds: all exit 0.
ranks ok "$up; sleep 0.5" || check "the four ranks' workers started" false
t0=$(date +%s%N)
wait_launchers 4
check "every rank succeeds: every launcher exits 0 ($s0 $s1 $s2 $s3)" [ "$s0 $s1 $s2 $s3" = "0 0 0 0" ]

# --- Rank 2's launcher dies (supervisor, then guardian, SIGKILLed): the others stop within 1 s.
ranks die "$up; exec sleep 60" || check "the four ranks' workers started" false
t0=$(date +%s%N)
kill -KILL $(pgrep -P ${pids[2]} -x aml-launch) ${pids[2]} 2>/dev/null
for r in 0 1 3; do
  wait ${pids[r]}
  eval "s$r=$?"
  eval "ms$r=$((($(date +%s%N) - t0) / 1000000))"
done
check "rank 2's launcher killed: the others stop within 1 s ($ms0 $ms1 $ms3 ms), all failing ($s0 $s1 $s3)" \
  bash -c "[ $ms3 -lt 1000 ] && [ $s0 != 0 ] && [ $s0 = $s1 ] && [ $s1 = $s3 ]"
check "rank 2's launcher killed: they name rank 2's launcher" \
  grep -q "rank 2 on node 0 (.*): its launcher was lost: it died" "$WORK/die.0.err" ||
  cat "$WORK"/die.*.err

# --- --no-group: each rank alone, as before groups. Rank 1's failure stops only rank 1.
ranks alone "$up; if [ \$RANK = 1 ]; then $all_up; exit 9; fi; sleep 1.5" --no-group ||
  check "the four ranks' workers started" false
t0=$(date +%s%N)
wait_launchers 4
check "--no-group: rank 1 exits 9, the others finish their work and exit 0 ($s0 $s1 $s2 $s3)" \
  [ "$s0 $s1 $s2 $s3" = "0 9 0 0" ]
read -r port0 store0 <"$WORK/port.0"
check "--no-group: the workers keep the scheduler's MASTER_PORT ($port0)" [ "$port0" = "$P" ]

# --- Two ranks claiming one rank: a clear error naming RANK. The job lasts long enough for the
# second claim to meet its store (with `true` it could be over, its store gone, first).
P=$(port)
for i in 0 1; do
  env -i PATH=/usr/bin:/bin MARK="aml-ppgroup-$$-dup" MASTER_ADDR=127.0.0.1 MASTER_PORT="$P" \
    WORLD_SIZE=2 RANK=$i LOCAL_RANK=$i LOCAL_WORLD_SIZE=2 "$BIN" --rdzv-timeout 3 -- sleep 2 \
    >/dev/null 2>"$WORK/dup.$i.err" &
done
env -i PATH=/usr/bin:/bin MARK="aml-ppgroup-$$-dup" MASTER_ADDR=127.0.0.1 MASTER_PORT="$P" \
  WORLD_SIZE=2 RANK=1 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 "$BIN" --rdzv-timeout 3 -- true \
  >/dev/null 2>"$WORK/dup.2.err"
wait
check "a second launcher for rank 1 is refused, naming RANK" bash -c \
  "cat '$WORK'/dup.*.err | grep -q 'RANK.*1.*joined with it first'" || cat "$WORK"/dup.*.err

# --- Under a real mpirun across two hosts (network namespaces; mpirun starts its daemons
# through an rsh agent that enters the other host's namespace): rank 3, on host 1, exits 9;
# every rank's launcher, on both hosts, exits 9 naming it.
if command -v mpirun >/dev/null; then
  bash "$CLUSTER" up "$NET" 2
  printf '#!/bin/sh\nhost=$1; shift\nexec bash %s exec %s "${host#%sn}" sh -c "$*"\n' "$CLUSTER" "$NET" "$NET" >"$WORK/rsh"
  chmod +x "$WORK/rsh"
  t0=$(date +%s%N)
  bash "$CLUSTER" exec "$NET" 0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    MARK="aml-ppgroup-$$-mpi" timeout 60 mpirun --mca plm_rsh_agent "$WORK/rsh" \
    --mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0 \
    --mca orte_abort_on_non_zero_status 0 -H "${NET}n0:2,${NET}n1:2" -np 4 -x MARK \
    -x MASTER_ADDR="$(bash "$CLUSTER" addr 0)" -x MASTER_PORT=29577 \
    "$BIN" --summary-file "$WORK/mpi.{rank}.json" -- sh -c \
    'if [ $RANK = 3 ]; then sleep 1; echo "rank three gives up" >&2; exit 9; fi; exec sleep 60' \
    >"$WORK/mpi.out" 2>&1
  ms=$((($(date +%s%N) - t0) / 1000000))
  check "mpirun -np 4 on two hosts, rank 3 exits 9: all four launchers exit 9 naming rank 3 on node 1 (all done after ${ms} ms)" \
    $py -c '
import json, sys
for rank in range(4):
    s = json.load(open(f"{sys.argv[1]}/mpi.{rank}.json"))
    f = s["first_failure"]
    assert s["exit_code"] == 9 and f["rank"] == 3 and f["node_rank"] == 1, s
    assert f["stderr_tail"] == ["rank three gives up"], s
assert int(sys.argv[2]) < 10000, sys.argv[2]' "$WORK" "$ms" || cat "$WORK/mpi.out"

  # Stock mpirun (it aborts the job when a rank fails: TERM to every launcher about 1 s later,
  # SIGKILL 1 s after that); the workers take 3 s to end on TERM. Every launcher says at once
  # why it stops its worker, names mpirun's TERM (not passed on: one TERM per worker), and
  # says what the SIGKILL did. With mpirun's kill delay raised the workers get their grace.
  stock_mpirun() {  # stock_mpirun NAME MPIRUN-FLAGS...
    local name=$1
    shift
    bash "$CLUSTER" exec "$NET" 0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      MARK="aml-ppgroup-$$-mpi" timeout 60 mpirun --mca plm_rsh_agent "$WORK/rsh" \
      --mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0 "$@" -H "${NET}n0:2,${NET}n1:2" \
      -np 4 -x MARK -x MASTER_ADDR="$(bash "$CLUSTER" addr 0)" -x MASTER_PORT=29578 \
      "$BIN" -- sh -c 'trap "echo rank \$RANK got TERM >&2; sleep 3; exit 143" TERM
        if [ $RANK = 3 ]; then sleep 1; echo "rank three gives up" >&2; exit 9; fi
        sleep 60 & wait; wait' >"$WORK/$name.out" 2>&1
  }
  stock_mpirun stock
  said=0
  for r in 0 1 2; do
    grep -q "^aml-launch: rank $r (node [01]) stopped its worker: the job failed on [a-z ]* node: rank 3 (local rank 1) on node 1" \
      "$WORK/stock.out" && said=$((said + 1))
  done
  check "stock mpirun, rank 3 exits 9: every other launcher says it stopped its worker and why ($said of 3)" \
    [ $said = 3 ] || cat "$WORK/stock.out"
  check "stock mpirun: its TERM is named where it came, not passed on (one TERM per worker)" bash -c \
    "grep -q '^aml-launch: rank [01] (node 0, .*): SIGTERM from outside (sent by pid [0-9]*, [a-z]*) came at .* while it stopped its worker for that: not passed on' '$WORK/stock.out' &&
     for r in 0 1 2; do [ \$(grep -c \"^rank \$r got TERM\" '$WORK/stock.out') = 1 ] || exit 1; done" || cat "$WORK/stock.out"
  check "stock mpirun: its SIGKILL, 1 s later, is named with the worker it took" \
    grep -q "^aml-launch: rank [01] (node 0, .*): 0 of 1 worker(s) ended within the grace after SIGTERM; its launcher was killed (SIGKILL) at .* and 1 worker(s) with it" \
    "$WORK/stock.out" || cat "$WORK/stock.out"
  stock_mpirun patient --mca odls_base_sigkill_timeout 10
  check "mpirun --mca odls_base_sigkill_timeout 10: every worker gets one TERM and its grace, nobody is killed" bash -c \
    "[ \$(grep -c 'stopped its worker: the job failed on' '$WORK/patient.out') = 3 ] && ! grep -q 'SIGKILL' '$WORK/patient.out' &&
     for r in 0 1 2; do [ \$(grep -c \"^rank \$r got TERM\" '$WORK/patient.out') = 1 ] || exit 1; done" ||
    cat "$WORK/patient.out"
else
  check "Open MPI's mpirun is installed" false
fi

finish
