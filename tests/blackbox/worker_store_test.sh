#!/usr/bin/env bash
# The workers meet through the launchers (DESIGN §3): torch's store at MASTER_ADDR:MASTER_PORT is
# served by node 0's launcher, open to the job's hosts alone. On three network-namespace hosts:
# a two-node torch job (Debian's torch, gloo over env://, two workers a node) and, on the third
# host, a stranger with torch's own TCPStore client at the workers' port: refused before it can
# set or read a key, with a secret and without one; node 0 says so once; ss shows aml-launch,
# not a worker, listening on that port; node 1's workers reach it through their own launcher's
# relay on 127.0.0.1, and node 0 sees one connection from node 1, not one a worker connection;
# both nodes finish 0. Then rank 0's worker dies with
# --max-restarts 1: the others wait on the store until the launcher stops them (no reset
# connection), and round 1 starts with no key of round 0. --worker-store torch: rank 0's worker
# hosts it again.
# usage: worker_store_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
JOB="$HERE/worker_store_job.py"
APIS="$HERE/worker_store_apis.py"
NAME="wst$$"
HOSTS=3
py=/usr/bin/python3
WORK=$(mktemp -d)
cleanup() {
  kill_marked_processes "$NAME"
  "$CLUSTER" down "$NAME" "$HOSTS" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
netns_up "$CLUSTER" "$NAME" $HOSTS || { finish; exit; }
MASTER=$("$CLUSTER" addr 0)
on() { local host=$1; shift; "$CLUSTER" exec "$NAME" "$host" env AML_TEST_MARK="$NAME" "$@"; }
head -c 32 /dev/urandom | base64 >"$WORK/secret"
chmod 600 "$WORK/secret"

node() {  # node N OUT [flags...] -- command
  local n=$1 out=$2; shift 2
  on "$n" env PAUSE="${PAUSE:-0}" "$BIN" --nnodes 2 --nproc-per-node 2 --node-rank "$n" \
    --master-addr "$MASTER" --master-port 29621 --rdzv-timeout 30 "$@" >"$out" 2>&1
}
wait_for_text() {  # wait_for_text FILE TEXT SECONDS
  for _ in $(seq $(($3 * 20))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}
# The stranger: torch's own client, as anyone on the network has it.
stranger() {  # stranger PORT
  on 2 "$py" -c "
import datetime, torch.distributed as d
s = d.TCPStore('$MASTER', $1, None, False, datetime.timedelta(seconds=4))
s.set('stranger', 'was here')
print('ADMITTED', s.get('stranger'))" 2>&1
}

for secret in none file; do
  flags=()
  [ "$secret" = file ] && flags=(--rdzv-secret-file "$WORK/secret")
  PAUSE=6 node 0 "$WORK/$secret.0" "${flags[@]}" -- "$py" "$JOB" & n0=$!
  PAUSE=6 node 1 "$WORK/$secret.1" "${flags[@]}" -- "$py" "$JOB" & n1=$!
  wait_for_text "$WORK/$secret.0" "first sum" 40
  port=$(grep -o 'MASTER_PORT for the workers: [0-9]*' "$WORK/$secret.0" | grep -o '[0-9]*$')
  listener=$(on 0 ss -ltnpH "sport = :$port" 2>&1)
  check "secret $secret: aml-launch, not a worker, listens on the workers' MASTER_PORT $port ($listener)" \
    bash -c "grep -q 'aml-launch' <<<'$listener' && ! grep -q python <<<'$listener'"
  relay=$(grep -o 'through this launcher, at 127.0.0.1:[0-9]*' "$WORK/$secret.1" | grep -o '[0-9]*$')
  relay_listener=$(on 1 ss -ltnpH "sport = :${relay:-0}" 2>&1)
  check "secret $secret: node 1's workers meet at its launcher's relay, 127.0.0.1:$relay ($relay_listener)" \
    bash -c "[ -n '$relay' ] && grep -q 'aml-launch' <<<'$relay_listener' && [ \$(grep -c 'meets at 127.0.0.1:$relay' '$WORK/$secret.1') = 2 ]"
  from_node1=$(on 0 ss -tnH state established "sport = :$port" | grep -c "$("$CLUSTER" addr 1):")
  through=$(on 1 ss -tnH state established "dport = :${relay:-0}" | wc -l)
  check "secret $secret: node 0 holds one connection from node 1 for its $through worker connections ($from_node1)" \
    bash -c "[ $from_node1 = 1 ] && [ $through -ge 4 ]"
  check "secret $secret: node 0's workers meet at node 0's own address" \
    bash -c "[ \$(grep -c 'meets at $MASTER:$port' '$WORK/$secret.0') = 2 ]"
  out=$(stranger "$port")
  check "secret $secret: torch's own client on a third host is refused before it sets a key ($(tail -1 <<<"$out"))" \
    bash -c "! grep -q ADMITTED <<<'$out'"
  wait "$n0"; s0=$?
  wait "$n1"; s1=$?
  check "secret $secret: the torch job exits 0 on both hosts ($s0, $s1)" bash -c "[ $s0 = 0 ] && [ $s1 = 0 ]"
  check "secret $secret: all four ranks are through both all_reduces" \
    bash -c "[ \$(cat '$WORK/$secret.0' '$WORK/$secret.1' | grep -c 'second sum 4.0') = 4 ]"
  check "secret $secret: node 0 says once that it refused the stranger's host" \
    bash -c "[ \$(grep -c '10.77.0.3.*not one of the job.s hosts' '$WORK/$secret.0') = 1 ]"
  [ "$s0" = 0 ] && [ "$s1" = 0 ] || { cat "$WORK/$secret.0" "$WORK/$secret.1"; }
done

# --- Rank 0's worker dies: the store outlives it, and round 1 starts empty.
node 0 "$WORK/fail.0" --max-restarts 1 -- "$py" "$JOB" rank0-fails & n0=$!
node 1 "$WORK/fail.1" --max-restarts 1 -- "$py" "$JOB" rank0-fails & n1=$!
wait "$n0"; s0=$?
wait "$n1"; s1=$?
both="$WORK/fail.both"
cat "$WORK/fail.0" "$WORK/fail.1" >"$both"
check "rank 0 dies in round 0: the job restarts once and exits 0 on both hosts ($s0, $s1)" \
  bash -c "[ $s0 = 0 ] && [ $s1 = 0 ]"
check "rank 0 dies: no other rank saw its store go (no reset connection, no store error)" \
  bash -c "! grep -qiE 'reset by peer|DistNetworkError|DistStoreError|Broken pipe|the wait ended' '$both'"
check "round 1 starts with no key of round 0 (every rank read 0 there)" \
  bash -c "[ \$(grep -c 'attempt 1 first sum 10.0 stale 0' '$both') = 4 ]"
check "round 0's key was there for round 0's ranks (the check can see one)" \
  bash -c "grep -q 'attempt 0 first sum 10.0 stale 4' '$both'"
[ "$s0" = 0 ] && [ "$s1" = 0 ] || cat "$both"

# --- One node: tcp://, new_group, the object collectives and rpc through this launcher's store.
reserve_port apis_port || { finish; exit; }
out=$("$BIN" --nproc-per-node 2 --master-port "$apis_port" -- "$py" "$APIS" 2>&1); status=$?
check "one node: tcp://, new_group, all_gather_object and rpc through the launcher's store ($status)" \
  bash -c "[ $status = 0 ] && [ \$(grep -c 'gathered \[0, 1\] rpc' <<<\"\$0\") = 2 ]" "$out" || echo "$out"

# --- --worker-store torch: rank 0's worker hosts torch's own server again.
node 0 "$WORK/torch.0" --worker-store torch -- "$py" "$JOB" & n0=$!
node 1 "$WORK/torch.1" --worker-store torch -- "$py" "$JOB" & n1=$!
wait "$n0"; s0=$?
wait "$n1"; s1=$?
check "--worker-store torch: the job exits 0 with rank 0's own server ($s0, $s1)" \
  bash -c "[ $s0 = 0 ] && [ $s1 = 0 ]"
finish
