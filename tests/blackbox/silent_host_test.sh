#!/usr/bin/env bash
# Node 0's address drops every packet (a host that is gone, a firewall): no connect is ever
# answered, and the kernel alone would wait about two minutes. A launcher keeps to
# --rdzv-timeout anyway and names what it could not reach: node 0's store, etcd's member.
# In a network namespace of its own: 10.9.0.2 is a neighbour that never answers.
# usage: silent_host_test.sh AML_LAUNCH   (as root: it enters a network namespace with unshare)
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
if [ "${AML_SILENT_HOST_NETNS:-}" != 1 ]; then
  exec env AML_SILENT_HOST_NETNS=1 unshare --net bash -c '
    ip link set lo up && ip link add silent0 type veth peer name silent1 &&
    ip addr add 10.9.0.1/24 dev silent0 && ip link set silent0 up && ip link set silent1 up &&
    ip neigh add 10.9.0.2 lladdr 02:00:00:00:00:02 dev silent0 nud permanent && exec "$@"' \
    _ bash "$0" "$@"
fi
. "$HERE/assert.sh"

# timed NAME ARGS...: runs the launcher (at most 60 s), sets $status, $seconds and $out
timed() {
  local start=$SECONDS
  out=$(timeout 60 "$BIN" "$@" 2>&1)
  status=$?
  seconds=$((SECONDS - start))
}

timed --nnodes 2 --node-rank 1 --master-addr 10.9.0.2 --master-port 29500 --rdzv-timeout 3 -- true
check "node 1, node 0's store silent: gives up after --rdzv-timeout 3 ($seconds s, exit $status)" \
  test "$status" != 0 -a "$status" != 124 -a "$seconds" -le 10 || echo "$out"
check "... and says which store did not answer" \
  grep -q 'store=10.9.0.2:29500: expected a store accepting connections (no answer)' <<<"$out" ||
  echo "$out"

timed --nnodes 2 --rdzv-backend etcd --rdzv-endpoint 10.9.0.2:2379 --rdzv-id silent \
  --rdzv-timeout 3 -- true
check "etcd's only member silent: gives up after --rdzv-timeout 3 ($seconds s, exit $status)" \
  test "$status" != 0 -a "$status" != 124 -a "$seconds" -le 10 || echo "$out"
check "... and names the member" grep -q '10.9.0.2:2379' <<<"$out" || echo "$out"
finish
