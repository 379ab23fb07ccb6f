#!/usr/bin/env bash
# Only the job gets in (DESIGN §5), on test hosts in network namespaces: node 0 and node 1 of a
# two-node job, and a stranger on a third host that knows the run id and the port (as anyone
# on a Slurm cluster does) and speaks the store's wire format (store_stranger.py, its own
# implementation of the handshake). Without a secret the stranger stops the job with a forged
# report: the attack is real. With a secret file on each node it is refused at the handshake
# (no secret, a wrong one, a replayed handshake, a reflected proof, a worker's key posing as a
# launcher's), each refusal said by node 0, and every node finishes 0 naming nobody else's
# failure. A follower pointed at a fake store refuses it. The workers get a key of their own,
# never the secret, which cannot write the launchers' keys; aml::comm's Gloo meets through the
# store with it. --require-auth, --dry-run, and the store listening on the job's address only.
# usage: store_auth_test.sh AML_LAUNCH ALLREDUCE
set -u
BIN=$(realpath "$1")
ALLREDUCE=$(realpath "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
STRANGER="$HERE/store_stranger.py"
NAME="auth$$"
HOSTS=3
py=/usr/bin/python3
WORK=$(mktemp -d)
cleanup() {
  pkill -KILL -f "$WORK/" 2>/dev/null
  kill_marked_processes "$NAME"
  "$CLUSTER" down "$NAME" "$HOSTS" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
if ! "$CLUSTER" up "$NAME" "$HOSTS" 2>"$WORK/up.err"; then
  cat "$WORK/up.err"
  check "network namespaces can be made (ip netns, veth, bridge)" false
  finish; exit
fi
MASTER=$("$CLUSTER" addr 0)
on() { local host=$1; shift; "$CLUSTER" exec "$NAME" "$host" env AML_TEST_MARK="$NAME" "$@"; }
head -c 32 /dev/urandom | base64 >"$WORK/secret"
head -c 32 /dev/urandom | base64 >"$WORK/other"
chmod 600 "$WORK/secret" "$WORK/other"

# node N of the job: node NODE PORT OUT [flags...] -- command
node() {
  local n=$1 port=$2 out=$3; shift 3
  on "$n" "$BIN" --nnodes 2 --node-rank "$n" --master-addr "$MASTER" --master-port "$port" \
    --run-id victim --rdzv-timeout 20 "$@" >"$out" 2>&1
}
wait_for_text() {  # wait_for_text FILE TEXT SECONDS
  for _ in $(seq $(($3 * 20))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}

# --- Without a secret the attack is real: the stranger joins and stops the job.
node 0 29611 "$WORK/open.0" -- sleep 15 & n0=$!
node 1 29611 "$WORK/open.1" -- sleep 15 & n1=$!
wait_for_text "$WORK/open.0" "all 2 nodes joined" 20
out=$(on 2 "$py" "$STRANGER" abort "$MASTER" 29611 victim 2>&1)
wait "$n0"; s0=$?
wait "$n1"; s1=$?
check "no secret: the stranger is admitted and its forged report stops node 0 ($out; exit $s0)" bash -c \
  "grep -q '^admitted' <<<'$out' && [ $s0 = 99 ] && grep -q 'stranger' '$WORK/open.0'" || cat "$WORK/open.0"
check "no secret: each launcher says once that anyone who reaches the store can join or stop the job" bash -c \
  "[ \$(grep -c 'anyone who reaches the store' '$WORK/open.0') = 1 ] && [ \$(grep -c 'anyone who reaches the store' '$WORK/open.1') = 1 ]"

# --- With a secret file on each node: every attack is refused and the job runs to its end.
node 0 29612 "$WORK/auth.0" --rdzv-secret-file "$WORK/secret" -- sh -c \
  'sleep 6; echo "key=${AML_LAUNCH_STORE_KEY:+set} secret=${AML_LAUNCH_SECRET:-none}${AML_LAUNCH_SECRET_FILE:-}"' & n0=$!
node 1 29612 "$WORK/auth.1" --rdzv-secret-file "$WORK/secret" -- sh -c \
  "sleep 6; exec $py '$STRANGER' worker-abort $MASTER 29612 victim" & n1=$!
wait_for_text "$WORK/auth.0" "all 2 nodes joined" 20
attack() {  # attack NAME WANTED_STATUS MODE [SECRET_FILE]
  local name=$1 wanted=$2; shift 2
  local out status
  out=$(on 2 "$py" "$STRANGER" "$1" "$MASTER" 29612 victim "${@:2}" 2>&1); status=$?
  check "$name ($out)" [ "$status" = "$wanted" ]
}
attack "a stranger with the run id alone is refused at the handshake" 3 abort
attack "a stranger with a wrong secret is refused" 3 abort "$WORK/other"
attack "a replay of a real handshake's frames is refused" 0 replay "$WORK/secret"
attack "the store's own proof reflected back is refused" 0 reflect
attack "the workers' key presented as a launcher's is refused" 0 wrong-role "$WORK/secret"
attack "control: the same client with the job's secret is admitted as a worker" 0 admit "$WORK/secret"
wait "$n0"; s0=$?
wait "$n1"; s1=$?
check "with a secret: both nodes finish 0 ($s0 $s1) and name no failure" bash -c \
  "[ $s0 = 0 ] && [ $s1 = 0 ] && ! grep -q 'stopped by a stranger\|failed first' '$WORK/auth.0' '$WORK/auth.1'" ||
  cat "$WORK/auth.0" "$WORK/auth.1"
STRANGER_ADDR=$("$CLUSTER" addr 2)
for reason in "offered none" "left at this store" "a wrong proof"; do
  check "node 0 said once that it refused $STRANGER_ADDR: '$reason'" bash -c \
    "[ \$(grep -c 'refused a connection from $STRANGER_ADDR: .*$reason' '$WORK/auth.0') = 1 ]" || cat "$WORK/auth.0"
done
check "a worker has the store key, not the secret" grep -q "key=set secret=none$" "$WORK/auth.0"
check "a worker cannot write the launchers' abort record with its key" \
  grep -q "worker-abort: a worker may not use the launchers' keys" "$WORK/auth.1"

# --- A fake store at the endpoint: the follower refuses it, within seconds, saying why.
on 2 "$py" "$STRANGER" fake-store "$STRANGER_ADDR" 29613 victim "$WORK/other" >"$WORK/fake.out" 2>&1 &
for _ in $(seq 100); do on 2 ss -ltn 2>/dev/null | grep -q ":29613 " && break; sleep 0.05; done
start=$(date +%s%N)
on 1 "$BIN" --nnodes 2 --node-rank 1 --master-addr "$STRANGER_ADDR" --master-port 29613 --run-id victim \
  --rdzv-timeout 20 --rdzv-secret-file "$WORK/secret" -- touch "$WORK/fed" >"$WORK/fake.1" 2>&1; status=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "a follower refuses a fake store: exit 2 in $ms ms, its proof named wrong, nothing started" bash -c \
  "[ $status = 2 ] && [ $ms -lt 15000 ] && grep -q 'its proof is wrong' '$WORK/fake.1' && [ ! -e '$WORK/fed' ]" ||
  cat "$WORK/fake.1" "$WORK/fake.out"

# --- aml::comm's Gloo through the store with the workers' key, the secret in the environment.
for n in 0 1; do
  on "$n" env AML_LAUNCH_SECRET="$(cat "$WORK/secret")" "$BIN" --nnodes 2 --node-rank "$n" --nproc-per-node 2 \
    --master-addr "$MASTER" --master-port 29614 --run-id victim --rdzv-timeout 20 -- "$ALLREDUCE" --backend gloo \
    >"$WORK/gloo.$n" 2>&1 &
  eval "g$n=\$!"
done
wait "$g0"; s0=$?
wait "$g1"; s1=$?
check "aml::comm gloo over 2 nodes x 2 workers meets through the authenticated store ($s0 $s1)" bash -c \
  "[ $s0 = 0 ] && [ $s1 = 0 ] && grep -q 'allreduce of ranks 0..3 over gloo: sum = 6 (expected 6): ok' '$WORK/gloo.0'" || cat "$WORK/gloo.0" "$WORK/gloo.1"

# --- An elastic job (--nnodes 2:2) with a hot spare, all with the secret: rounds and the spare's
# wait go through the authenticated store; a stranger coming as a spare is refused.
for i in 0 1 2; do
  on "$i" "$BIN" --nnodes 2:2 --rdzv-endpoint "$MASTER:29617" --rdzv-id elastic --rdzv-last-call 1 \
    --rdzv-timeout 20 --rdzv-secret-file "$WORK/secret" -- sh -c 'echo "up $AML_LAUNCH_STORE_AUTH"; sleep 3' \
    >"$WORK/elastic.$i" 2>&1 &
  eval "e$i=\$!"
  sleep 0.3
done
out=$(on 2 "$py" "$STRANGER" abort "$MASTER" 29617 elastic 2>&1)
wait "$e0"; s0=$?
wait "$e1"; s1=$?
wait "$e2"; s2=$?
check "elastic with a secret: two nodes run a round, the third waits as a spare, all exit 0 ($s0 $s1 $s2)" bash -c \
  "[ $s0$s1$s2 = 000 ] && [ \$(cat '$WORK'/elastic.[012] | grep -c '^up key$') = 2 ] && grep -q 'hot spare' '$WORK/elastic.2'" ||
  cat "$WORK"/elastic.[012]
check "elastic: a stranger without the secret is refused ($out)" grep -q "^refused" <<<"$out"

# --- The store listens on the job's address, not on every interface.
node 0 29615 "$WORK/bind.0" --rdzv-secret-file "$WORK/secret" -- true & b0=$!
for _ in $(seq 100); do on 0 ss -ltn 2>/dev/null | grep -q ":29615 " && break; sleep 0.05; done
listening=$(on 0 ss -ltn | awk '$4 ~ /:29615$/ {print $4}')
check "node 0's store listens on $MASTER:29615 only ($listening)" [ "$listening" = "$MASTER:29615" ]
node 1 29615 "$WORK/bind.1" --rdzv-secret-file "$WORK/secret" -- true
wait "$b0"

# --- --require-auth, and what --dry-run says.
plain=(--nnodes 2 --node-rank 1 --master-addr "$MASTER" --master-port 29616)
out=$("$BIN" "${plain[@]}" --require-auth -- true 2>&1); status=$?
check "--require-auth without a secret: exit 2 naming it ($status)" bash -c \
  "[ $status = 2 ] && grep -q -- '--require-auth' <<<'$out'"
out=$(AML_LAUNCH_REQUIRE_AUTH=1 "$BIN" "${plain[@]}" --dry-run -- true 2>&1); status=$?
check "AML_LAUNCH_REQUIRE_AUTH=1 without a secret: exit 2 naming it ($status)" bash -c \
  "[ $status = 2 ] && grep -q 'AML_LAUNCH_REQUIRE_AUTH' <<<'$out'"
secret=$(cat "$WORK/secret")
mode() { "$BIN" "${plain[@]}" --dry-run --format json "$@" -- true | "$py" -c 'import json,sys; print(json.load(sys.stdin)["auth"]["mode"])'; }
got="$(mode --rdzv-secret-file "$WORK/secret") $(AML_LAUNCH_SECRET=$secret mode) $(mode)"
check "--dry-run json names the mode: $got" [ "$got" = "secret-file secret-env none" ]
text=$(AML_LAUNCH_SECRET=$secret "$BIN" "${plain[@]}" --dry-run -- true 2>&1)
check "--dry-run text names the mode" grep -q "^store auth: *secret-env: the job's secret from AML_LAUNCH_SECRET" <<<"$text"
# One node: the plan says what its stores admit, with a secret and without.
text=$("$BIN" --rdzv-secret-file "$WORK/secret" --require-auth --dry-run -- true 2>&1)
check "one node's --dry-run names the secret and why one node needs none" \
  grep -q "^store auth: *secret-file: the job's secret from the file .*; not needed on one node: its stores listen on 127.0.0.1" <<<"$text"
got=$("$BIN" --dry-run --format json -- true | "$py" -c 'import json,sys; a = json.load(sys.stdin)["auth"]; print(a["mode"], "|", a["about"])')
check "one node without a secret says so in JSON ($got)" grep -q "^none | no secret, none needed (one node" <<<"$got"
all=$( { "$BIN" "${plain[@]}" --dry-run --format json --rdzv-secret-file "$WORK/secret" -- true
         AML_LAUNCH_SECRET=$secret "$BIN" "${plain[@]}" --dry-run -- true
         AML_LAUNCH_SECRET=$secret "$BIN" --nproc-per-node 1 -- env; } 2>&1)
check "the secret shows nowhere: --dry-run, a worker's environment" bash -c "! grep -qF -- '$secret' <<<\"\$1\"" _ "$all"
out=$(printf 'short' >"$WORK/short"; "$BIN" "${plain[@]}" --rdzv-secret-file "$WORK/short" --dry-run -- true 2>&1); status=$?
check "a secret under 16 bytes: exit 2 naming the flag ($status)" bash -c \
  "[ $status = 2 ] && grep -q -- '--rdzv-secret-file.*at least 16 bytes' <<<'$out'"
finish
