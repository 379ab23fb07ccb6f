#!/usr/bin/env bash
# Hostile traffic never stops or slows the job (DESIGN §5): a four-node job with a secret on test
# hosts in network namespaces, while a fifth host scans node 0's store with nmap -sV and keeps
# 2,000 connections open that never speak and 200 that send random bytes or a huge length
# (store_stranger.py flood, each held 6 s and made again: past the store's handshake deadline). The job's rendezvous completes within a
# bound, every node finishes 0, node 0's launcher stays within a memory bound and says each
# kind of refusal, not each refused connection. A quiet run of the same job first gives the
# rendezvous time the bound is set from.
# usage: store_hostile_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NAME="hos$$"
HOSTS=5
NODES=4
PORT=29621
py=/usr/bin/python3
WORK=$(mktemp -d)
cleanup() {
  exec 7>&- 2>/dev/null
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
if ! command -v nmap >/dev/null; then
  check "nmap is installed (scripts/install-deps.sh installs it)" false
  finish; exit
fi
MASTER=$("$CLUSTER" addr 0)
ATTACKER=4
on() { local host=$1; shift; "$CLUSTER" exec "$NAME" "$host" env AML_TEST_MARK="$NAME" "$@"; }
head -c 32 /dev/urandom | base64 >"$WORK/secret"

# Node 0's launcher processes (its guardian and supervisor; not their workers), by the mark its
# environment carries.
node0_launchers() {
  local p
  for p in $(grep -l -s -z -x "AML_TEST_NODE=$NAME-0" /proc/[0-9]*/environ | cut -d/ -f3); do
    [ "$(readlink "/proc/$p/exe")" = "$BIN" ] && echo "$p"
  done
}
# job TAG: node 0 first, and once its store listens (and, under attack, nmap and the flood are at
# it for 2 s) the other three; sets $joined_ms (node 0's rendezvous, from the others' start),
# $statuses, and node 0's peak memory $peak_kb.
job() {
  local tag=$1 n start
  node() {
    on "$1" env AML_TEST_NODE="$NAME-$1" "$BIN" --nnodes "$NODES" --node-rank "$1" --master-addr "$MASTER" --master-port "$PORT" \
      --run-id hostile --rdzv-timeout 60 --rdzv-secret-file "$WORK/secret" -- sleep 4 >"$WORK/$tag.$1" 2>&1 &
    eval "p$1=\$!"
  }
  node 0
  for _ in $(seq 200); do on 0 ss -ltn | grep -q ":$PORT " && break; sleep 0.02; done
  if [ "$tag" = hostile ]; then
    # Its probes wait and retry past the flood's first burst of SYNs (2,200 at once), which can
    # fill the listener's queue for a moment: a probe dropped then read as "filtered". On a
    # loaded machine that moment can outlast a scan's retries: then it scans again.
    (
      for _ in 1 2 3; do
        on "$ATTACKER" nmap -Pn -sV --min-rtt-timeout 250ms --max-retries 20 -p "$PORT" "$MASTER" \
          >"$WORK/nmap.out" 2>&1
        grep -q "^$PORT/tcp *filtered" "$WORK/nmap.out" || break
      done
    ) &
    nmap=$!
  fi
  sleep 2
  start=$(date +%s%N)
  for n in $(seq 1 $((NODES - 1))); do node "$n"; done
  joined_ms=""
  peak_kb=0
  while kill -0 "$p0" 2>/dev/null; do
    if [ -z "$joined_ms" ] && grep -q "all $NODES nodes joined" "$WORK/$tag.0"; then
      joined_ms=$((($(date +%s%N) - start) / 1000000))
    fi
    for p in $(node0_launchers); do
      kb=$(awk '/^VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null)
      [ -n "$kb" ] && [ "$kb" -gt "$peak_kb" ] && peak_kb=$kb
    done
    sleep 0.05
  done
  statuses=""
  for n in $(seq 0 $((NODES - 1))); do
    wait "$(eval echo "\$p$n")"
    statuses="$statuses$? "
  done
}

job quiet
quiet_ms=$joined_ms quiet_kb=$peak_kb
check "quiet: every node finishes 0 (${statuses% }), joined in $quiet_ms ms, node 0 peak $quiet_kb kB" \
  [ "$statuses" = "0 0 0 0 " ]

# The attacker: the flood runs while its stdin (fd 7) stays open; nmap beside it.
exec 7> >(on "$ATTACKER" "$py" "$HERE/store_stranger.py" flood "$MASTER" "$PORT" hostile >"$WORK/flood.out" 2>&1)
job hostile
exec 7>&-
wait "$nmap"
bound_ms=$((quiet_ms * 3 + 3000))
check "under attack: every node finishes 0 (${statuses% })" [ "$statuses" = "0 0 0 0 " ] ||
  cat "$WORK/hostile.0" "$WORK/hostile.1"
check "under attack: the rendezvous took $joined_ms ms (quiet $quiet_ms ms; bound 3 x quiet + 3 s = $bound_ms ms)" \
  bash -c "[ -n '$joined_ms' ] && [ '$joined_ms' -le $bound_ms ]"
check "under attack: node 0's launcher peaked at $peak_kb kB (quiet $quiet_kb kB; bound quiet + 16 MB)" \
  [ "$peak_kb" -le $((quiet_kb + 16384)) ]
for _ in $(seq 100); do grep -q "made" "$WORK/flood.out" && break; sleep 0.1; done
check "the flood ran, the store closed idle and junk connections first ($(cat "$WORK/flood.out"))" \
  grep -q "flood: made [0-9]\{4,\} connections; the store closed [1-9][0-9]* of them first" "$WORK/flood.out"
check "nmap -sV scanned the open store ($(grep -m1 "^$PORT/tcp" "$WORK/nmap.out"))" grep -q "^$PORT/tcp *open" "$WORK/nmap.out" ||
  cat "$WORK/nmap.out"
said=$(grep -c "refused a connection from" "$WORK/hostile.0")
check "node 0 named refusals a few times, not per connection ($said lines)" bash -c "[ $said -ge 1 ] && [ $said -le 10 ]" ||
  grep "refused" "$WORK/hostile.0" | head -20
finish
