#!/usr/bin/env bash
# Multi-node runs on a cluster of network namespaces (tests/cluster/netns_cluster.sh): the
# interface toward MASTER_ADDR is found in each node, and a 2-node x 2-worker torch gloo job
# (Azure ML PyTorch per-node environment) all_reduces across the bridge.
# usage: multinode_test.sh AML_LAUNCH EXAMPLE
set -u
BIN=$(realpath "$1")
EXAMPLE=$(realpath "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NAME="aml$$"
trap '"$CLUSTER" down "$NAME" 2 >/dev/null 2>&1' EXIT
if ! "$CLUSTER" up "$NAME" 2 2>"/tmp/$NAME.err"; then
  cat "/tmp/$NAME.err"; rm -f "/tmp/$NAME.err"
  check "network namespaces can be made (ip netns, veth, bridge)" false
  finish; exit
fi
rm -f "/tmp/$NAME.err"
MASTER=$("$CLUSTER" addr 0)
# Under AZUREML_RUN_ID the per-rank logs go to ./user_logs: keep them out of the caller's directory.
WORK=$(mktemp -d)
trap '"$CLUSTER" down "$NAME" 2 >/dev/null 2>&1; rm -rf "$WORK"' EXIT
cd "$WORK"

node_env() {  # node_env NODE_RANK: Azure ML PyTorch, per-node launch (process_count_per_node=1)
  echo env -i PATH=/usr/bin:/bin MASTER_ADDR="$MASTER" MASTER_PORT=29511 WORLD_SIZE=2 NODE_RANK="$1" \
    RANK="$1" LOCAL_RANK=0 AZUREML_RUN_ID=multinode-test
}

plan=$("$CLUSTER" exec "$NAME" 1 $(node_env 1) "$BIN" --dry-run --format json --nproc-per-node 2 -- true)
check "node 1 plans ranks 2 and 3 of 4 with NCCL/GLOO_SOCKET_IFNAME=eth0" /usr/bin/python3 -c '
import json, sys
p = json.loads(sys.argv[1])
assert [w["rank"] for w in p["workers"]] == [2, 3] and p["world_size"] == 4, p
assert p["socket_ifname"] == "eth0", p["socket_ifname_reason"]
for w in p["workers"]:
    assert w["env"]["NCCL_SOCKET_IFNAME"] == "eth0" and w["env"]["GLOO_SOCKET_IFNAME"] == "eth0", w["env"]' "$plan"

if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
  out0=$(mktemp) out1=$(mktemp)
  "$CLUSTER" exec "$NAME" 0 $(node_env 0) "$BIN" --nproc-per-node 2 -- /usr/bin/python3 "$EXAMPLE" >"$out0" 2>&1 &
  node0=$!
  "$CLUSTER" exec "$NAME" 1 $(node_env 1) "$BIN" --nproc-per-node 2 -- /usr/bin/python3 "$EXAMPLE" >"$out1" 2>&1
  status1=$?
  wait $node0
  status0=$?
  cat "$out0" "$out1"
  check "2 nodes x 2 workers: both launchers exit 0 ($status0, $status1)" bash -c "[ $status0 = 0 ] && [ $status1 = 0 ]"
  check "the all_reduce over 4 ranks is right, printed once by rank 0 on node 0" \
    bash -c "grep -q 'all_reduce of ranks 0..3 = 6 (expected 6): ok' '$out0' && ! grep -q all_reduce '$out1'"
  rm -f "$out0" "$out1"
else
  check "python3-torch is installed (scripts/install-deps.sh installs it)" false
fi
finish
