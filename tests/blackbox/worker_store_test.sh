#!/usr/bin/env bash
# The workers meet through the launchers (DESIGN §3): torch's store at MASTER_ADDR:MASTER_PORT is
# served by node 0's launcher, open to the job's hosts alone. On three network-namespace hosts:
# a two-node torch job (Debian's torch, gloo over env://, two workers a node). Every worker of
# both nodes gets node 0's address and the named port, as torchrun gives them, where node 0's
# launcher listens on that one port for the launchers and the workers alike (ss); rank 0 hosts a
# store of its own at MASTER_PORT+1 and every rank reaches it; torch's own TCPStore client
# reaches MASTER_ADDR:MASTER_PORT from both nodes. On the third host, a stranger with torch's
# own client at that port is refused before it can set or read a key, with a secret and without
# one, and so is a launcher without the job's secret; node 0 says so once; both nodes finish 0.
# --dry-run's worker environment is the one the workers got, on node 0 and on node 1.
# --worker-store relay: node 1's workers reach node 0 through their own launcher's relay on
# 127.0.0.1, and node 0 sees one connection from node 1, not one a worker connection, and
# says so. Then rank 0's worker dies with --max-restarts 1: the others wait on the store until
# the launcher stops them (no reset connection), and round 1 starts with no key of round 0.
# Node 0 whose descriptors, or whose accept queue (net.core.somaxconn), cannot take a
# connection a rank: the relay, said so.
# --worker-store torch: rank 0's worker hosts it again.
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
# What the launcher, torch (torchrun's torchelastic_* logs), JAX and TensorFlow write to
# TMPDIR goes with the test's files.
export TMPDIR="$WORK"
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
  on "$n" env GATE="${GATE:-}" ${LIMIT:+prlimit "--nofile=$LIMIT"} "$BIN" --nnodes 2 --nproc-per-node 2 --node-rank "$n" \
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

same_env() {  # same_env NODE DUMPDIR FLAGS...: --dry-run's workers' environment is theirs
  local n=$1 dump=$2; shift 2
  on "$n" "$BIN" --dry-run --format json --nnodes 2 --nproc-per-node 2 --node-rank "$n" \
    --master-addr "$MASTER" --master-port 29621 --rdzv-timeout 30 "$@" -- "$py" "$JOB" |
    "$py" "$HERE/dry_run_matches.py" "$dump"
}

for secret in none file; do
  flags=()
  [ "$secret" = file ] && flags=(--rdzv-secret-file "$WORK/secret")
  mkdir -p "$WORK/env.$secret"
  export ENV_DUMP="$WORK/env.$secret" PLUS_K=1
  GATE="$WORK/$secret.go" node 0 "$WORK/$secret.0" "${flags[@]}" -- "$py" "$JOB" & n0=$!
  GATE="$WORK/$secret.go" node 1 "$WORK/$secret.1" "${flags[@]}" -- "$py" "$JOB" & n1=$!
  unset ENV_DUMP PLUS_K
  wait_for_text "$WORK/$secret.0" "first sum" 40
  wait_for_text "$WORK/$secret.1" "first sum" 10
  both=$(cat "$WORK/$secret.0" "$WORK/$secret.1")
  check "secret $secret: every worker of both nodes meets at node 0's address and the named port" \
    bash -c "[ \$(grep -c 'meets at $MASTER:29621\$' <<<\"\$0\") = 4 ]" "$both"
  listeners=$(on 0 ss -ltnpH 2>&1 | grep aml-launch)
  check "secret $secret: node 0's launcher listens on one port, 29621, for the launchers and the workers ($listeners)" \
    bash -c "[ \$(grep -c . <<<'$listeners') = 1 ] && grep -q ':29621 ' <<<'$listeners'"
  check "secret $secret: rank 0 hosts a store of its own at MASTER_PORT+1 and all 4 ranks reach it" \
    bash -c "[ \$(grep -c 'reached rank 0.s own store at MASTER_PORT+1' <<<\"\$0\") = 4 ]" "$both"
  out=$(stranger 29621)
  check "secret $secret: torch's own client on a third host is refused before it sets a key ($(tail -1 <<<"$out"))" \
    bash -c "! grep -q ADMITTED <<<'$out'"
  if [ "$secret" = file ]; then
    out=$(on 2 "$BIN" --nnodes 2 --nproc-per-node 2 --node-rank 1 --master-addr "$MASTER" \
      --master-port 29621 --rdzv-timeout 3 -- true 2>&1); status=$?
    check "secret file: a launcher without the job's secret is refused at that port ($status: $(tail -1 <<<"$out"))" \
      bash -c "[ $status != 0 ] && grep -q 'admits only its own members' <<<\"\$0\"" "$out"
  fi
  touch "$WORK/$secret.go"  # the window closes: the workers go on to their second all_reduce
  wait "$n0"; s0=$?
  wait "$n1"; s1=$?
  check "secret $secret: the torch job exits 0 on both hosts ($s0, $s1)" bash -c "[ $s0 = 0 ] && [ $s1 = 0 ]"
  check "secret $secret: all four ranks are through both all_reduces" \
    bash -c "[ \$(cat '$WORK/$secret.0' '$WORK/$secret.1' | grep -c 'second sum 4.0') = 4 ]"
  check "secret $secret: node 0 says once that it refused the stranger's host" \
    bash -c "[ \$(grep -c '10.77.0.3.*not one of the job.s hosts' '$WORK/$secret.0') = 1 ]"
  for n in 0 1; do
    said=$(same_env "$n" "$WORK/env.$secret" "${flags[@]}")
    check "secret $secret: node $n's --dry-run shows the environment its workers got ($said)" \
      [ "$said" = same ]
  done
  [ "$s0" = 0 ] && [ "$s1" = 0 ] || { cat "$WORK/$secret.0" "$WORK/$secret.1"; }
done

# --- --worker-store relay: one connection a node to node 0, said on every node.
GATE="$WORK/relay.go" node 0 "$WORK/relay.0" --worker-store relay -- "$py" "$JOB" & n0=$!
GATE="$WORK/relay.go" node 1 "$WORK/relay.1" --worker-store relay -- "$py" "$JOB" & n1=$!
wait_for_text "$WORK/relay.0" "first sum" 40
relay=$(grep -o "relay, at MASTER_ADDR 127.0.0.1, MASTER_PORT [0-9]*" "$WORK/relay.1" | grep -o '[0-9]*$')
relay_listener=$(on 1 ss -ltnpH "sport = :${relay:-0}" 2>&1)
check "relay: node 1's workers meet at its launcher's relay, 127.0.0.1:$relay ($relay_listener)" \
  bash -c "[ -n '$relay' ] && grep -q 'aml-launch' <<<'$relay_listener' && [ \$(grep -c 'meets at 127.0.0.1:$relay' '$WORK/relay.1') = 2 ]"
from_node1=$(on 0 ss -tnH state established "sport = :29621" | grep -c "$("$CLUSTER" addr 1):")
through=$(on 1 ss -tnH state established "dport = :${relay:-0}" | wc -l)
check "relay: node 0 holds node 1's launcher's two connections and its relay's one, for its $through worker connections ($from_node1)" \
  bash -c "[ $from_node1 -le 3 ] && [ $through -ge 4 ]"
check "relay: node 0's workers meet at node 0's own address and port" \
  bash -c "[ \$(grep -c 'meets at $MASTER:29621\$' '$WORK/relay.0') = 2 ]"
check "relay: node 0 and node 1 say that the relay is used and why" \
  bash -c "grep -q 'through their own launcher.s relay: --worker-store relay' '$WORK/relay.0' && grep -q 'AML_LAUNCH_NODE0_ADDR: --worker-store relay' '$WORK/relay.1'"
relay_plan=$(on 1 "$BIN" --dry-run --nnodes 2 --nproc-per-node 2 --node-rank 1 --master-addr "$MASTER" \
  --master-port 29621 --worker-store relay -- true 2>&1)
check "relay: node 1's --dry-run says so, MASTER_ADDR 127.0.0.1" \
  bash -c "grep -q 'worker-store relay: the other nodes' <<<\"\$0\" && grep -q 'MASTER_ADDR=127.0.0.1' <<<\"\$0\"" "$relay_plan"
touch "$WORK/relay.go"
wait "$n0"; s0=$?
wait "$n1"; s1=$?
check "relay: the torch job exits 0 on both hosts ($s0, $s1)" bash -c "[ $s0 = 0 ] && [ $s1 = 0 ]"
[ "$s0" = 0 ] && [ "$s1" = 0 ] || cat "$WORK/relay.0" "$WORK/relay.1"

# --- Node 0 whose hard descriptor limit cannot hold a connection a rank: the relay, said so.
LIMIT=200:200 node 0 "$WORK/limit.0" -- "$py" "$JOB" & n0=$!
node 1 "$WORK/limit.1" -- "$py" "$JOB" & n1=$!
wait "$n0"; s0=$?
wait "$n1"; s1=$?
check "node 0 with 200 descriptors: the job exits 0 on both hosts ($s0, $s1)" bash -c "[ $s0 = 0 ] && [ $s1 = 0 ]"
check "node 0 with 200 descriptors: node 1's workers go through its relay, and both nodes say why" \
  bash -c "[ \$(grep -c 'meets at 127.0.0.1:' '$WORK/limit.1') = 2 ] && grep -q 'descriptor limit (200) cannot hold' '$WORK/limit.0' && grep -q 'descriptor limit (200) cannot hold' '$WORK/limit.1'"
[ "$s0" = 0 ] && [ "$s1" = 0 ] || cat "$WORK/limit.0" "$WORK/limit.1"

# --- Node 0 whose accept queue is shorter than the ranks connecting at once (net.core.somaxconn
# of host 0's own namespace set to 3, for 4 ranks): the relay, said so; then set back.
queue=$(on 0 cat /proc/sys/net/core/somaxconn)
on 0 sysctl -qw net.core.somaxconn=3
node 0 "$WORK/queue.0" -- "$py" "$JOB" & n0=$!
node 1 "$WORK/queue.1" -- "$py" "$JOB" & n1=$!
wait "$n0"; s0=$?
wait "$n1"; s1=$?
on 0 sysctl -qw net.core.somaxconn="$queue"
check "node 0's accept queue of 3 for 4 ranks: the job exits 0 on both hosts ($s0, $s1)" bash -c "[ $s0 = 0 ] && [ $s1 = 0 ]"
check "... node 1's workers go through its relay, and both nodes say why" \
  bash -c "[ \$(grep -c 'meets at 127.0.0.1:' '$WORK/queue.1') = 2 ] && grep -q 'accept queue (net.core.somaxconn 3) is shorter than the job.s 4 ranks' '$WORK/queue.0' && grep -q 'accept queue (net.core.somaxconn 3)' '$WORK/queue.1'"
[ "$s0" = 0 ] && [ "$s1" = 0 ] || cat "$WORK/queue.0" "$WORK/queue.1"

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
