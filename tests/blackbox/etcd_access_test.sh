#!/usr/bin/env bash
# A guarded etcd (DESIGN §5, "Rendezvous backends"): a real three-member etcd on network-namespace
# hosts of its own that speaks only TLS, wants a client certificate of the job's CA, and has its
# authentication on (the launchers' user may read and write /aml-launch/ only).
# 1. The right CA, client certificate and user (--rdzv-conf, https:// members): an elastic job
#    of two nodes and a spare runs, node 0 is lost, the spare takes its place, the job ends 0;
#    the password is in no command line, no worker's environment and no --dry-run.
# 2. Each thing missing or wrong is refused within seconds, naming it: plain HTTP, no client
#    certificate, a CA that does not vouch for etcd, a client certificate of another CA, a wrong
#    password, no user, a user without rights on the job's keys, a password on the command line,
#    no OpenSSL to open.
# usage: etcd_access_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
ETCD="$(dirname "$0")/../cluster/etcd_cluster.sh"
NET="ea$$"
HOSTS=6  # 0-2: etcd's members; 3-5: launchers
FIRST_HOST=3
MARK="aml-etcd-access-$$"
trap 'kill_marked_processes "$MARK"; bash "$ETCD" down "$WORK"; bash "$CLUSTER" down "$NET" $HOSTS
      [ -n "${AML_TEST_KEEP:-}" ] || rm -rf "$WORK"' EXIT
if ! command -v etcd >/dev/null || ! command -v openssl >/dev/null; then
  check "etcd and openssl are installed (scripts/install-deps.sh installs them)" false
  finish; exit
fi
netns_up "$CLUSTER" "$NET" $HOSTS || { finish; exit; }
T="$WORK/tls"
check "certificates: the job's CA, etcd's members, a launcher's, and another CA's" \
  bash "$(dirname "$0")/../cluster/make_tls.sh" "$T" 0 1 2
export ETCD_TLS_DIR="$T"
check "a three-member etcd that speaks only TLS and wants a client certificate starts" \
  bash "$ETCD" up "$NET" "$WORK" 0 1 2
PASSWORD="pw-$$-$RANDOM$RANDOM"
check "etcd's authentication on: user trainer may use /aml-launch/ only" \
  bash "$ETCD" auth "$NET" 0 trainer "$PASSWORD"
unset ETCD_TLS_DIR
printf '%s\n' "$PASSWORD" >"$WORK/password"
HTTPS=$(bash "$ETCD" endpoints 0 1 2 | sed 's|\([^,]*\)|https://\1|g')
CONF="cacert=$T/ca.pem,cert=$T/client.pem,key=$T/client.key,user=trainer,password_file=$WORK/password"

cat >"$WORK/worker.sh" <<'EOS'
#!/bin/sh
r=$TORCHELASTIC_RESTART_COUNT
echo "round $r rank $RANK/$WORLD_SIZE node $GROUP_RANK/$GROUP_WORLD_SIZE"
env >"$W/$JOB.env.$HOST_ID.$r"
[ "$LOCAL_RANK" = 0 ] && { echo "$GROUP_RANK $GROUP_WORLD_SIZE" >"$W/$JOB.rank.$HOST_ID.$r.part" &&
  mv "$W/$JOB.rank.$HOST_ID.$r.part" "$W/$JOB.rank.$HOST_ID.$r"; }  # whole or not there
while :; do
  [ -e "$W/$JOB.finish" ] && exit 0
  sleep 0.05
done
EOS
chmod +x "$WORK/worker.sh"
CMD=("$WORK/worker.sh")
# --- 1. The job's own launchers: TLS both ways and etcd's user.
J=ok
ARGS=(--nnodes 2:2 --rdzv-backend etcd --rdzv-endpoint "$HTTPS" --rdzv-id "ok-$$"
  --rdzv-conf "$CONF" --nproc-per-node 1 --rdzv-last-call 1 --node-timeout 3 --rdzv-timeout 30
  --max-restarts 2)
# Host 4 makes its calls through etcd's JSON gateway, the others through its gRPC API: both
# transports in one job.
GATEWAY_ARGS=("${ARGS[@]/#$CONF/$CONF,transport=gateway}")
start $J 3 no_env "${ARGS[@]}"
sleep 0.3
start $J 4 no_env "${GATEWAY_ARGS[@]}"
wait_file "$WORK/$J.rank.3.0" 20 && wait_file "$WORK/$J.rank.4.0" 10
start $J 5 no_env "${ARGS[@]}"
for _ in $(seq 100); do grep -q "hot spare" "$WORK/$J.out.5" 2>/dev/null && break; sleep 0.05; done
ranks=$(cat "$WORK"/$J.rank.*.0 2>/dev/null | sort | tr '\n' ' ')
check "TLS + client certificate + etcd user, gRPC and the gateway: two nodes make round 0 ($ranks), the third waits as a spare" \
  bash -c "[ '$ranks' = '0 2 1 2 ' ] && grep -q 'hot spare' '$WORK/$J.out.5'" || show $J
check "the password is in no process's command line" \
  bash -c "! grep -a -l -s -F -f '$WORK/password' /proc/[0-9]*/cmdline"
check "the password is in no worker's environment" \
  bash -c "! grep -q -- '$PASSWORD' '$WORK'/$J.env.*"
node0=$(host_with_rank $J 0 0)
kill_host $J "$node0"
other=$((7 - node0))  # of hosts 3 and 4, the one left
wait_file "$WORK/$J.rank.5.1" 20 && wait_file "$WORK/$J.rank.$other.1" 5
got="$(rank_of $J 5 1) $(rank_of $J $other 1)"
check "node 0 (host $node0) lost: the spare takes node rank 0 through the guarded etcd ($got)" \
  [ "$got" = "0 1" ] || show $J
touch "$WORK/$J.finish"
statuses="$(wait_status $J $other 20) $(wait_status $J 5 20)"
check "the job ends 0 on both nodes left ($statuses)" [ "$statuses" = "0 0" ] || show $J

plan=$(env -i PATH=/usr/bin:/bin AML_LAUNCH_ETCD_PASSWORD="$PASSWORD" "$BIN" --dry-run --format json \
  --nnodes 2 --node-rank 1 --rdzv-backend etcd --rdzv-endpoint "$HTTPS" --rdzv-id "plan-$$" \
  --rdzv-conf "cacert=$T/ca.pem,cert=$T/client.pem,key=$T/client.key,user=trainer" -- true 2>&1)
echo "$plan" >"$WORK/plan.json"
check "--dry-run names the access (TLS, the CA, the client certificate, the user)" \
  grep -q "\"access\": \"TLS (CA $T/ca.pem, client certificate $T/client.pem), etcd user trainer\"" \
  "$WORK/plan.json" || head -40 "$WORK/plan.json"
check "--dry-run shows no password, not even one from AML_LAUNCH_ETCD_PASSWORD" \
  bash -c "! grep -q -- '$PASSWORD' '$WORK/plan.json'"

# --- 2. Whatever is missing or wrong: exit 2 within seconds, naming it.
# The refusals come at etcd's first answers; --rdzv-timeout bounds only the wait for one. 15 s:
# etcd checking a user's password (bcrypt) on a loaded machine took over 5 s to answer.
refused() {  # [REFUSED_ENV=F] [REFUSED_TIMEOUT=S] refused NAME PATTERN ARGS...: a lone node of a 2-node job is refused
  local name=$1 pattern=$2 t0 ms status
  shift 2
  t0=$(date +%s%N)
  start "$name" 3 "${REFUSED_ENV:-no_env}" --nnodes 2 --node-rank 0 --rdzv-backend etcd --rdzv-id "$name-$$" \
    --rdzv-timeout "${REFUSED_TIMEOUT:-15}" --node-timeout 3 "$@"
  status=$(wait_status "$name" 3 30)
  ms=$((($(date +%s%N) - t0) / 1000000))
  check "$name: refused (exit $status after $ms ms) naming it" \
    bash -c "[ '$status' = 2 ] && grep -q -- '$pattern' '$WORK/$name.out.3'" || show "$name"
  check "$name: the password is not in what it said" bash -c "! grep -q -- '$PASSWORD' '$WORK/$name.out.3'"
}
PLAIN=$(bash "$ETCD" endpoints 0 1 2)
REFUSED_TIMEOUT=5 refused plain-http "an etcd member that answers" --rdzv-endpoint "$PLAIN"  # no answer: the whole wait
refused no-client-cert "does etcd take this client certificate" --rdzv-endpoint "$HTTPS" --rdzv-conf "cacert=$T/ca.pem"
refused rogue-ca "certificate the CA vouches for" --rdzv-endpoint "$HTTPS" \
  --rdzv-conf "cacert=$T/rogue-ca.pem,cert=$T/client.pem,key=$T/client.key"
refused rogue-client "does etcd take this client certificate" --rdzv-endpoint "$HTTPS" \
  --rdzv-conf "cacert=$T/ca.pem,cert=$T/rogue-client.pem,key=$T/rogue-client.key"
printf 'wrong-%s\n' "$PASSWORD" >"$WORK/wrong"
refused wrong-password "authentication failed" --rdzv-endpoint "$HTTPS" \
  --rdzv-conf "cacert=$T/ca.pem,cert=$T/client.pem,key=$T/client.key,user=trainer,password_file=$WORK/wrong"
refused no-user "authentication is on; give its user" --rdzv-endpoint "$HTTPS" \
  --rdzv-conf "cacert=$T/ca.pem,cert=$T/client.pem,key=$T/client.key"
refused no-rights "user stranger needs readwrite on the job" --rdzv-endpoint "$HTTPS" \
  --rdzv-conf "cacert=$T/ca.pem,cert=$T/client.pem,key=$T/client.key,user=stranger,password_file=$WORK/password"
refused password-on-command-line "password_file=FILE or the variable AML_LAUNCH_ETCD_PASSWORD" \
  --rdzv-endpoint "$HTTPS" --rdzv-conf "cacert=$T/ca.pem,user=trainer,password=$PASSWORD"
printf 'not a library\n' >"$WORK/libssl.so.3"
no_libssl() { echo AML_TLS_LIBRARY="$WORK/libssl.so.3"; }  # as on an image without OpenSSL
REFUSED_ENV=no_libssl refused no-libssl "libssl that opens" --rdzv-endpoint "$HTTPS" \
  --rdzv-conf "cacert=$T/ca.pem,cert=$T/client.pem,key=$T/client.key"
printf 'not a library\n' >"$WORK/libnghttp2.so.14"
no_libnghttp2() { echo AML_HTTP2_LIBRARY="$WORK/libnghttp2.so.14"; }  # an image without it
REFUSED_ENV=no_libnghttp2 refused grpc-without-libnghttp2 "transport=grpc.*libnghttp2" \
  --rdzv-endpoint "$HTTPS" --rdzv-conf "$CONF,transport=grpc"

kill_marked_processes "$MARK"
finish
