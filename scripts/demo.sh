#!/usr/bin/env bash
# The main demo: the plan for node 1 of a 2-node Azure ML MPI job (one process per node, four
# workers each), then four Open MPI ranks, each an aml-launch running the rank_info example (their
# launchers meeting with a job secret),
# then four workers that allreduce their ranks through aml::comm (Gloo).
set -eu
cd "$(dirname "$0")/.."
BIN=build/launcher/aml-launch

echo "== aml-launch --dry-run: node 1 of a 2-node Azure ML MPI job, process_count_per_node=1"
env -i PATH=/usr/bin:/bin OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=0 \
  OMPI_COMM_WORLD_LOCAL_SIZE=1 AZ_BATCH_MASTER_NODE=10.0.0.4:6000 AZUREML_RUN_ID=demo_run \
  "$BIN" --dry-run --format text --nproc-per-node 4 -- python train.py

echo
echo "== mpirun -np 4 -x AML_LAUNCH_SECRET aml-launch -- rank_info (the ranks' launchers prove the job's secret)"
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
AML_LAUNCH_SECRET=$(head -c 24 /dev/urandom | base64)
export AML_LAUNCH_SECRET
mpirun --oversubscribe -np 4 -x AML_LAUNCH_SECRET "$BIN" -- build/examples/rank_info | sort
unset AML_LAUNCH_SECRET

echo
echo "== aml-launch --nproc-per-node 4 -- allreduce (aml::comm over Gloo)"
"$BIN" --nproc-per-node 4 -- build/examples/allreduce --backend gloo
