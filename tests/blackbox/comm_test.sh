#!/usr/bin/env bash
# aml::comm through examples/allreduce: Gloo with 2, 4 and 8 ranks under aml-launch, a rank
# that never comes (an error, not a hang), MPI under mpirun per-process (and the clear error of
# a per-node launch), mpi4py's world against the environment aml-launch normalizes, and NCCL
# without a GPU: the unique id crosses the store, then a clear "no usable GPU" error. Open MPI
# and NCCL are opened at run time: nothing links them, and a missing or wrong library is named.
# usage: comm_test.sh AML_LAUNCH ALLREDUCE
set -u
BIN=$(realpath "$1")
ALLREDUCE=$(realpath "$2")
. "$(dirname "$0")/assert.sh"
py=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# In a sanitizer build, leak checking stays on except in MPI processes: Open MPI's own
# allocations outlive MPI_Finalize (its plugins are unloaded by then), and those reports
# would be about Open MPI, not about this project.
clean() { env -i PATH=/usr/bin:/bin HOME=/tmp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$@"; }
clean_mpi() { clean ASAN_OPTIONS=detect_leaks=0 "$@"; }

for n in 2 4 8; do
  out=$(clean "$BIN" --nproc-per-node $n -- "$ALLREDUCE" --backend gloo 2>&1); status=$?
  expected=$((n * (n - 1) / 2))
  check "gloo, $n ranks on one node: exit 0 ($status)" [ $status = 0 ]
  check "gloo, $n ranks: the sum is right and only the master prints it" bash -c \
    '[ "$(grep -c "allreduce of ranks" <<<"$1")" = 1 ] && grep -q "allreduce of ranks 0..$2 over gloo: sum = $3 (expected $3): ok" <<<"$1"' \
    _ "$out" $((n - 1)) $expected || echo "$out"
done

# Rank 1 of 2 never starts: rank 0 gives up after AML_COMM_TIMEOUT and says why.
reserve_port port
start=$(date +%s%N)
out=$(clean RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port AML_COMM_TIMEOUT=2 \
  "$ALLREDUCE" --backend gloo 2>&1); status=$?
took=$((($(date +%s%N) - start) / 1000000))
check "gloo, a rank that never comes: an error after the timeout, not a hang ($status, ${took} ms)" \
  bash -c "[ $status = 1 ] && [ $took -lt 10000 ]"
check "gloo, a rank that never comes: the error says what was missing ($out)" \
  grep -q "gloo=rank 0 of 2: expected to join the others" <<<"$out"

if command -v mpirun >/dev/null; then
  out=$(clean_mpi mpirun --oversubscribe -np 4 "$BIN" -- "$ALLREDUCE" --backend mpi 2>&1); status=$?
  check "mpi, per-process under mpirun -np 4: exit 0 ($status)" [ $status = 0 ]
  check "mpi, 4 ranks: the sum is right, printed once" bash -c \
    '[ "$(grep -c "allreduce of ranks" <<<"$1")" = 1 ] && grep -q "allreduce of ranks 0..3 over mpi: sum = 6 (expected 6): ok" <<<"$1"' _ "$out" || echo "$out"
  out=$(clean mpirun --oversubscribe -np 4 "$BIN" -- "$ALLREDUCE" --backend gloo 2>&1); status=$?
  check "gloo under mpirun -np 4 (MPI's ranks, gloo's transport): exit 0 ($status)" [ $status = 0 ] || echo "$out"
  # Azure ML's per-node MPI launch: each MPI process spawns workers that are not MPI ranks.
  out=$(clean mpirun --oversubscribe -np 2 -x AZ_BATCH_MASTER_NODE=127.0.0.1:6000 bash -c \
    'OMPI_COMM_WORLD_LOCAL_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0 exec "$0" --nproc-per-node 2 -- "$1" --backend mpi' \
    "$BIN" "$ALLREDUCE" 2>&1); status=$?
  check "mpi, per-node launch: a clear error that MPI's world is not the job's ($status)" bash -c \
    '[ "$1" != 0 ] && grep -q "expected MPI.s world (.*) to be the one the environment describes" <<<"$2"' _ "$status" "$out"
  if $py -c 'import mpi4py' 2>/dev/null; then
    out=$(clean mpirun --oversubscribe -np 4 "$BIN" -- $py -c '
import os
from mpi4py import MPI
w = MPI.COMM_WORLD
local = w.Split_type(MPI.COMM_TYPE_SHARED)
assert (w.rank, w.size) == (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])), (w.rank, os.environ["RANK"])
assert (local.rank, local.size) == (int(os.environ["LOCAL_RANK"]), int(os.environ["LOCAL_WORLD_SIZE"]))
print("mpi4py agrees", w.rank)' 2>&1); status=$?
    check "mpi4py: MPI's world and local world agree with RANK, WORLD_SIZE, LOCAL_RANK ($status)" \
      bash -c '[ "$1" = 0 ] && [ "$(grep -c "mpi4py agrees" <<<"$2")" = 4 ]' _ "$status" "$out" || echo "$out"
  else
    check "python3-mpi4py is installed (scripts/install-deps.sh installs it)" false
  fi
else
  check "Open MPI's mpirun is installed" false
fi

# --preflight: allreduce from 8 B to 64 MiB on every rank, checked, then the command.
out=$(clean "$BIN" --nproc-per-node 4 --preflight -- sh -c 'echo "command ran as $RANK"' 2>&1); status=$?
check "preflight (gloo, 4 ranks): exit 0 and then the command ran on every rank ($status)" bash -c \
  '[ "$1" = 0 ] && [ "$(grep -c "command ran as" <<<"$2")" = 4 ]' _ "$status" "$out" || echo "$out"
check "preflight: a table from 8 B to 64 MiB with busbw and no wrong value, then 'passed'" bash -c \
  'grep -q "size .*count .*time(us) .*algbw(GB/s) .*busbw(GB/s) .*#wrong" <<<"$1" &&
   grep -Eq "^\[rank 0\] +8 B +2 .* 0$" <<<"$1" && grep -Eq "^\[rank 0\] +64 MiB +16777216 .* 0$" <<<"$1" &&
   grep -q "aml-preflight: passed" <<<"$1"' _ "$out" || echo "$out"
# The cases below stop at 1 MiB (AML_PREFLIGHT_MAX_BYTES): enough to judge them, and quick in
# a sanitizer build too.
out=$(clean AML_PREFLIGHT_MAX_BYTES=1048576 "$BIN" --nproc-per-node 2 --preflight-min-busbw 100000 -- echo command-ran 2>&1); status=$?
check "preflight below --preflight-min-busbw: exit 1, the reason, and the command not started ($status)" bash -c \
  '[ "$1" = 1 ] && grep -q "below --preflight-min-busbw" <<<"$2" && grep -q "the command was not started" <<<"$2" &&
   ! grep -q command-ran <<<"$2"' _ "$status" "$out" || echo "$out"
out=$(clean AML_PREFLIGHT_MAX_BYTES=1048576 AML_PREFLIGHT_FAULT=wrong:2 "$BIN" --nproc-per-node 4 --preflight -- echo command-ran 2>&1); status=$?
check "preflight with rank 2 seeing wrong values: exit 1, rank 2 named, the command not started ($status)" bash -c \
  '[ "$1" = 1 ] && grep -Eq "aml-preflight: rank 2 got [0-9]+ wrong values at 8 B" <<<"$2" && ! grep -q command-ran <<<"$2"' \
  _ "$status" "$out" || echo "$out"
out=$(clean AML_PREFLIGHT_MAX_BYTES=1048576 AML_PREFLIGHT_FAULT=slow:1 "$BIN" --nproc-per-node 4 --preflight -- echo command-ran 2>&1); status=$?
check "preflight with a slow rank 1: it is named (and the job goes on: slow is not wrong) ($status)" bash -c \
  '[ "$1" = 0 ] && grep -q "aml-preflight: rank 1 is slower than the rest at 1 MiB" <<<"$2" && grep -q command-ran <<<"$2"' \
  _ "$status" "$out" || echo "$out"
if [ ! -e /dev/nvidia0 ]; then
  out=$(clean "$BIN" --nproc-per-node 2 --preflight=nccl -- echo command-ran 2>&1); status=$?
  check "preflight=nccl without a GPU: exit 1 naming the missing GPU, the command not started ($status)" bash -c \
    '[ "$1" = 1 ] && grep -q "no usable GPU / driver" <<<"$2" && ! grep -q command-ran <<<"$2"' _ "$status" "$out" || echo "$out"
fi
if command -v mpirun >/dev/null; then
  out=$(clean_mpi mpirun --oversubscribe -np 2 "$BIN" --preflight=mpi -- echo command-ran 2>&1); status=$?
  check "preflight=mpi under mpirun -np 2: passed, then the command ($status)" bash -c \
    '[ "$1" = 0 ] && grep -q "aml-preflight: passed" <<<"$2" && [ "$(grep -c command-ran <<<"$2")" = 2 ]' _ "$status" "$out" || echo "$out"
fi
out=$(clean "$BIN" --preflight=fast -- true 2>&1); status=$?
check "--preflight with an unknown backend: exit 2 naming it ($status)" bash -c \
  '[ "$1" = 2 ] && grep -q -- "--preflight=fast: expected gloo, mpi or nccl" <<<"$2"' _ "$status" "$out"

# Open MPI and NCCL are opened when a communicator asks for them, not linked: aml-preflight
# and libaml_comm start without them, and what is missing is named.
preflight=$(dirname "$BIN")/aml-preflight
comm_lib=$(ldd "$ALLREDUCE" | awk '/libaml_comm/ {print $3}')
needed=$(readelf -d "$preflight" "$comm_lib" 2>&1 | grep NEEDED)
check "aml-preflight and libaml_comm.so need neither MPI, NCCL nor CUDA to start" bash -c \
  '[ -n "$2" ] && [ -n "$1" ] && ! grep -Eq "libmpi|libnccl|libcuda|libcudart|libopen-" <<<"$1"' _ "$needed" "$comm_lib" ||
  echo "$needed"
out=$(clean AML_MPI_LIBRARY=/nonexistent/libmpi.so.40 mpirun --oversubscribe -np 1 "$BIN" --no-group \
  -- "$ALLREDUCE" --backend mpi 2>&1)
check "AML_MPI_LIBRARY naming a missing file: the error names the variable and the file" \
  grep -q "AML_MPI_LIBRARY=/nonexistent/libmpi.so.40: expected Open MPI's libmpi.so.40 that opens" <<<"$out" || echo "$out"
zlib=$(ldconfig -p | awk '/libz.so.1 / {print $NF; exit}')
out=$(clean AML_MPI_LIBRARY="$zlib" "$BIN" --nproc-per-node 1 -- "$ALLREDUCE" --backend mpi 2>&1); status=$?
check "AML_MPI_LIBRARY naming another library: exit 1, the missing MPI symbols and Open MPI's ABI named ($status)" bash -c \
  '[ "$1" = 1 ] && grep -q "mpi=a libmpi without MPI_Initialized, .*: expected Open MPI.s libmpi.so.40" <<<"$2"' \
  _ "$status" "$out" || echo "$out"
out=$(clean AML_NCCL_LIBRARY="$zlib" "$BIN" --nproc-per-node 1 -- "$ALLREDUCE" --backend nccl 2>&1); status=$?
check "AML_NCCL_LIBRARY naming another library: exit 1, the missing NCCL functions named ($status)" bash -c \
  '[ "$1" = 1 ] && grep -q "nccl=a libnccl without ncclGetVersion, ncclGetUniqueId" <<<"$2"' _ "$status" "$out" || echo "$out"

# NCCL without a GPU: the id exchange happens, then every rank reports the missing GPU.
start=$(date +%s%N)
out=$(clean AML_COMM_TIMEOUT=20 "$BIN" --nproc-per-node 2 -- "$ALLREDUCE" --backend nccl 2>&1); status=$?
took=$((($(date +%s%N) - start) / 1000000))
if [ -e /dev/nvidia0 ]; then
  check "nccl with a GPU here: exit 0 ($status)" [ $status = 0 ] || echo "$out"
else
  check "nccl without a GPU: exit 1, well within the timeout ($status, ${took} ms)" \
    bash -c "[ $status = 1 ] && [ $took -lt 20000 ]"
  check "nccl without a GPU: the id crossed the store, then 'no usable GPU / driver'" bash -c \
    'grep -q "no usable GPU / driver: " <<<"$1" && grep -q "the unique id had arrived through the store" <<<"$1"' _ "$out" || echo "$out"
  if command -v mpirun >/dev/null; then
    # mpirun must not abort the other rank when the first fails: it would race that rank's own
    # error (and mpirun's status then says nothing; each launcher's summary does). The ranks'
    # launchers alone (--no-group): with no launcher store, the id crosses by MPI_Bcast.
    out=$(clean_mpi AML_COMM_TIMEOUT=20 mpirun --oversubscribe --mca orte_abort_on_non_zero_status 0 -np 2 \
      "$BIN" --no-group -- "$ALLREDUCE" --backend nccl 2>&1)
    check "nccl under mpirun without a GPU: the id came by MPI_Bcast, then 'no usable GPU' on both ranks, each failing" bash -c \
      'for r in 0 1; do grep -q "rank $r: nccl=rank $r of 2: .*no usable GPU / driver.*arrived through MPI_Bcast" <<<"$1" &&
         grep -q "aml-launch: rank $r (local rank $r) .*failed first.*: exit code 1" <<<"$1" || exit 1; done' \
      _ "$out" || echo "$out"
  fi
fi
finish
