#!/usr/bin/env bash
# The README demo: Open MPI starts 4 processes, each is aml-launch running the rank_info
# example; every rank sees its own place and exactly one is the master.
# usage: mpirun_demo_test.sh AML_LAUNCH RANK_INFO
set -u
BIN=$1
RANK_INFO=$2
. "$(dirname "$0")/assert.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mpirun --oversubscribe -np 4 "$BIN" -- "$RANK_INFO" 2>&1); status=$?
echo "$out"
check "mpirun exits 0" [ $status = 0 ]
for r in 0 1 2 3; do
  check "rank $r reported once" [ "$(grep -c "^rank $r of 4, local rank $r of 4, node 0, source aml-launch" <<<"$out")" = 1 ]
done
check "exactly one master" [ "$(grep -c 'is_master true' <<<"$out")" = 1 ]
check "the master is rank 0" grep -q "^rank 0 of 4.*is_master true" <<<"$out"

# Azure ML MPI per-node launch: 2 MPI processes, each spawning 2 workers, sees 4 ranks.
out=$(mpirun --oversubscribe -np 2 -x AZ_BATCH_MASTER_NODE=127.0.0.1:6000 bash -c \
  'OMPI_COMM_WORLD_LOCAL_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0 exec "$0" --nproc-per-node 2 -- "$1"' "$BIN" "$RANK_INFO" 2>&1)
status=$?
echo "$out"
check "per-node launch under mpirun exits 0" [ $status = 0 ]
ranks_seen=$(grep -o 'rank [0-9] of 4' <<<"$out" | sort | tr '\n' ,)
check "per-node launch gives ranks 0..3 of 4 ($ranks_seen)" [ "$ranks_seen" = 'rank 0 of 4,rank 1 of 4,rank 2 of 4,rank 3 of 4,' ]
finish
