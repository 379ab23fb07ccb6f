#!/usr/bin/env bash
# The released aml-launch in a root with an old glibc (Debian 11's 2.31, as Ubuntu 20.04 and the
# Azure ML base images have; tests/release/old_glibc_root.sh) and busybox, run with chroot in
# PID and mount namespaces of its own: aml-launch is PID 1 there, as a container's ENTRYPOINT.
# Exit statuses, signals, fail-fast, reaping, log files, --dry-run, a 2-node job whose
# MASTER_ADDR is a host name from the root's /etc/hosts (glibc 2.31's own resolver reads it),
# and --preflight=gloo with the aml-preflight beside it (an image without MPI or NCCL: those
# backends say what is missing).
# usage: old_glibc_test.sh PORTABLE_AML_LAUNCH [HOST_BUILT_AML_LAUNCH]
set -u
BIN=$(realpath "$1")
HOST_BIN=${2:+$(realpath "$2")}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
WORK=$(mktemp -d)
ROOT=$WORK/root
cleanup() {
  for p in $(pgrep -f "chroot $ROOT" 2>/dev/null); do kill -KILL -- "-$p" "$p" 2>/dev/null; done
  umount -R "$ROOT/proc" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

if ! "$HERE/old_glibc_root.sh" "$ROOT" 2>"$WORK/root.err"; then
  cat "$WORK/root.err"
  check "a root with Debian 11's glibc can be made (apt-get download libc6)" false
  finish; exit
fi
cp "$BIN" "$ROOT/aml-launch"
[ ! -e "$(dirname "$BIN")/aml-preflight" ] || cp "$(dirname "$BIN")/aml-preflight" "$ROOT/aml-preflight"

in_root() {  # in_root COMMAND...: PID 1 of fresh PID and mount namespaces, inside the root
  unshare --pid --fork --mount --mount-proc="$ROOT/proc" chroot "$ROOT" "$@"
}

root_launcher() {  # the pid (here) of the aml-launch running inside the root
  for p in $(pgrep -x aml-launch); do
    [ "$(readlink "/proc/$p/root")" = "$ROOT" ] && echo "$p"
  done
}

glibc=$(in_root /lib/x86_64-linux-gnu/libc.so.6 | head -1)
check "the root's glibc is 2.31 ($glibc)" grep -q "version 2.31" <<<"$glibc"
if [ -n "$HOST_BIN" ]; then
  cp "$HOST_BIN" "$ROOT/host-built"
  out=$(in_root /host-built --version 2>&1)
  check "a build made on this machine does not start there (the root is old enough to tell)" \
    grep -q "GLIBC_2.3[2-9]' not found" <<<"$out"
fi

# What it is, and the plan.
version=$(in_root /aml-launch --version 2>&1)
check "--version runs ($version)" grep -Eq '^aml-launch [0-9]+\.[0-9]+\.[0-9]+' <<<"$version"
plan=$(in_root env OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=0 \
  OMPI_COMM_WORLD_LOCAL_SIZE=1 AZ_BATCH_MASTER_NODE=node0.training.internal:6000 \
  /aml-launch --dry-run --format json --nproc-per-node 4 -- python train.py 2>&1)
check "--dry-run: node 1 of an Azure ML MPI job, ranks 4 to 7" bash -c \
  'grep -q "\"source\": \"openmpi\"" <<<"$1" && grep -q "\"world_size\": 8" <<<"$1" &&
   grep -q "\"rank\": 7" <<<"$1" && grep -q "\"master_addr\": \"node0.training.internal\"" <<<"$1"' _ "$plan"

# Exit statuses pass through, a signal gives 128 + N.
for code in 0 7 255; do
  in_root /aml-launch -- sh -c "exit $code" >/dev/null 2>&1
  status=$?
  check "exit status $code passes through ($status)" [ "$status" = "$code" ]
done
in_root /aml-launch -- sh -c 'kill -SEGV $$' >/dev/null 2>"$WORK/segv.err"
status=$?
check "a worker killed by SIGSEGV gives 139 ($status) and is named" \
  bash -c '[ "$1" = 139 ] && grep -q "signal 11 (SIGSEGV)" "$2"' _ "$status" "$WORK/segv.err"

# Fail-fast: rank 1 fails, the others (sleeping for a minute) are stopped at once.
start=$(date +%s%N)
in_root /aml-launch --nproc-per-node 3 -- \
  sh -c 'if [ "$RANK" = 1 ]; then sleep 0.3; echo "out of memory" >&2; exit 5; fi; exec sleep 60' \
  >/dev/null 2>"$WORK/fail.err"
status=$?
took=$((($(date +%s%N) - start) / 1000000))
check "fail-fast: exit 5 in ${took} ms (< 5000), rank 1 named with its stderr" bash -c \
  '[ "$1" = 5 ] && [ "$2" -lt 5000 ] && grep -q "rank 1 (local rank 1).*failed first.*exit code 5" "$3" &&
   grep -q "out of memory" "$3"' _ "$status" "$took" "$WORK/fail.err"

# TERM from outside reaches every worker; the job ends with 143.
rm -f "$ROOT"/tmp/*
in_root /aml-launch --nproc-per-node 2 -- \
  sh -c 'trap "echo TERM > /tmp/term.$RANK; trap - TERM; kill -TERM \$\$" TERM; touch /tmp/up.$RANK; while :; do sleep 0.05; done' \
  >/dev/null 2>&1 &
job=$!
for _ in $(seq 200); do [ -f "$ROOT/tmp/up.0" ] && [ -f "$ROOT/tmp/up.1" ] && break; sleep 0.05; done
launcher=$(root_launcher)
check "the launcher is PID 1 of its namespace" \
  grep -q "^NSpid:.*[[:space:]]1$" "/proc/$launcher/status"
kill -TERM "$launcher"
wait "$job"
status=$?
check "TERM: both workers got it, exit 143 ($status)" \
  bash -c '[ "$1" = 143 ] && [ -f "$2/tmp/term.0" ] && [ -f "$2/tmp/term.1" ]' _ "$status" "$ROOT"

# As PID 1 it reaps orphans: a worker's background child outlives its shell, then exits.
out=$(in_root /aml-launch -- sh -c 'sh -c "sleep 0.2 &"; sleep 1; z=0
  for f in /proc/[0-9]*/stat; do read -r line < "$f"; case "$line" in *") Z "*) z=$((z + 1));; esac; done
  echo "zombies=$z"' 2>&1)
check "orphans are reaped: no zombie left ($out)" grep -qx "zombies=0" <<<"$out"

# Every line into the rank's log file.
in_root /aml-launch --nproc-per-node 2 --log-dir /tmp/logs -- sh -c 'seq 1 1000; echo "done $RANK"' >/dev/null 2>&1
check "log files: 1,001 lines each" bash -c \
  '[ "$(wc -l < "$1/tmp/logs/std_log_process_1.txt")" = 1001 ] && tail -1 "$1/tmp/logs/std_log_process_1.txt" | grep -qx "done 1"' \
  _ "$ROOT"

# The preflight of the release: Gloo is built in; this image has no MPI and no NCCL.
out=$(in_root env AML_PREFLIGHT_MAX_BYTES=65536 /aml-launch --nproc-per-node 2 --preflight=gloo -- echo command-ran 2>&1)
status=$?
check "--preflight=gloo: passed, then the command on both ranks ($status)" bash -c \
  '[ "$1" = 0 ] && grep -q "allreduce over 2 ranks (gloo)" <<<"$2" && grep -q "aml-preflight: passed" <<<"$2" &&
   [ "$(grep -c command-ran <<<"$2")" = 2 ]' _ "$status" "$out" || echo "$out"
out=$(in_root /aml-launch --nproc-per-node 2 --preflight=mpi -- echo command-ran 2>&1)
status=$?
check "--preflight=mpi without Open MPI in the image: exit 1 naming libmpi.so.40, the command not started" bash -c \
  '[ "$1" = 1 ] && grep -q "mpi=Open MPI.s libmpi.so.40 not found" <<<"$2" && grep -q AML_MPI_LIBRARY <<<"$2" &&
   ! grep -q command-ran <<<"$2"' _ "$status" "$out" || echo "$out"
out=$(in_root /aml-launch --nproc-per-node 2 --preflight=nccl -- echo command-ran 2>&1)
status=$?
check "--preflight=nccl without NCCL in the image: exit 1 naming libnccl.so.2, the command not started" bash -c \
  '[ "$1" = 1 ] && grep -q "nccl=NCCL.s libnccl.so.2 not found" <<<"$2" && grep -q AML_NCCL_LIBRARY <<<"$2" &&
   ! grep -q command-ran <<<"$2"' _ "$status" "$out" || echo "$out"

# Two nodes, two workers each, the master named by a host name of the root's /etc/hosts.
port=$((20000 + $$ % 20000))
node() {  # node I COMMAND: node I's launcher (Kubeflow's variables), in the background
  in_root env PET_NNODES=2 PET_NODE_RANK="$1" PET_MASTER_ADDR=node0.training.internal \
    PET_MASTER_PORT="$port" /aml-launch --nproc-per-node 2 --rdzv-timeout 30 -- sh -c "$2" \
    >"$WORK/node$1.out" 2>"$WORK/node$1.err" &
}
two_nodes() {  # two_nodes NODE0_COMMAND NODE1_COMMAND: both to the end; $s0 $s1 their statuses
  local pid0 pid1
  port=$((port + 1))
  node 0 "$1"
  pid0=$!
  node 1 "$2"
  pid1=$!
  wait "$pid0"; s0=$?
  wait "$pid1"; s1=$?
}
two_nodes 'echo "rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR"' \
  'echo "rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR node0=$AML_LAUNCH_NODE0_ADDR"'
ranks=$(cat "$WORK/node0.out" "$WORK/node1.out" | grep -o 'rank=[0-9]*' | sort | tr '\n' ' ')
# Every worker of both nodes gets node 0's name, as the launch gave it (no relay: node 0's
# descriptors hold the four ranks, so no AML_LAUNCH_NODE0_ADDR either).
check "2 nodes met at node0.training.internal: exits $s0 $s1, ranks $ranks" bash -c \
  '[ "$1$2" = 00 ] && [ "$3" = "rank=0 rank=1 rank=2 rank=3 " ] &&
   [ "$(grep -c "world=4 master=node0.training.internal$" "$4/node0.out")" = 2 ] &&
   [ "$(grep -c "world=4 master=node0.training.internal node0=$" "$4/node1.out")" = 2 ]' \
  _ "$s0" "$s1" "$ranks" "$WORK"
[ "$s0$s1" = 00 ] || cat "$WORK/node0.err" "$WORK/node1.err"
two_nodes 'exec sleep 60' 'if [ "$RANK" = 3 ]; then sleep 0.5; exit 7; fi; exec sleep 60'
check "2 nodes: rank 3 fails with 7 on node 1, both nodes exit 7 ($s0 $s1) naming it" bash -c \
  '[ "$1$2" = 77 ] && grep -q "rank 3 .*failed first" "$3/node0.err"' _ "$s0" "$s1" "$WORK"
finish
