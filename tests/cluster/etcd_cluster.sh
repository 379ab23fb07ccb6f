#!/usr/bin/env bash
# A real etcd cluster (Debian's etcd-server) on hosts of a netns cluster (netns_cluster.sh):
# one member per host, client port 2379, peer port 2380, data under DIR.
#   etcd_cluster.sh up NET DIR I J K...   start members on hosts I J K; wait until healthy
#   etcd_cluster.sh endpoints I J K...    "10.77.0.x:2379,..." (what launchers are given)
#   etcd_cluster.sh leader NET I J K...   the host that leads now
#   etcd_cluster.sh kill DIR I            SIGKILL host I's member
#   etcd_cluster.sh stop|cont DIR         SIGSTOP / SIGCONT every member (etcd unreachable)
#   etcd_cluster.sh down DIR              SIGKILL every member, remove their data
#   etcd_cluster.sh warnings DIR          what the members logged of slow disks, slow peers and
#                                        elections (for a failed test's output)
#   etcd_cluster.sh auth NET I USER PASSWORD  etcd's authentication on: root, and USER with
#                                        readwrite on /aml-launch/ only (role "launchers")
# ETCD_BIN and ETCDCTL_BIN name other builds (etcd 3.5: fetch-etcd35.sh); Debian's by default.
# ETCD_FLAGS: more flags for every member (a benchmark's --enable-v2).
# A member's data is on tmpfs (/dev/shm; ETCD_DATA_ROOT names another): etcd fsyncs its log
# for every write, and on a disk shared with a build's writes one fsync can take seconds, longer
# than the tests' --node-timeout, so every launcher would lose etcd for the disk's sake.
# Pre-vote on, as etcd 3.5 and later have it by default (3.4 has it off): a member frozen for a
# moment and back does not set off rounds of elections (without it, a leader frozen for 1 s
# left the cluster without a leader for 5 s in one run of 5).
# ETCD_TLS_DIR=DIR (certificates of make_tls.sh): clients and peers speak TLS, and a client
# must show a certificate of DIR/ca.pem.
set -eu
scheme=http
tls_client=() tls_peer=() tls_ctl=()
if [ -n "${ETCD_TLS_DIR:-}" ]; then
  scheme=https
  tls_ctl=(--cacert "$ETCD_TLS_DIR/ca.pem" --cert "$ETCD_TLS_DIR/client.pem" --key "$ETCD_TLS_DIR/client.key")
fi
CLUSTER="$(dirname "$0")/netns_cluster.sh"
addr() { bash "$CLUSTER" addr "$1"; }
ctl() {  # ctl NET HOST ARGS...: etcdctl (v3) run on that host
  local net=$1 host=$2
  shift 2
  ETCDCTL_API=3 bash "$CLUSTER" exec "$net" "$host" "${ETCDCTL_BIN:-etcdctl}" --dial-timeout 1s \
    --command-timeout 2s ${tls_ctl[@]+"${tls_ctl[@]}"} "$@"
}

case "$1" in
  up)
    net=$2 dir=$3
    shift 3
    initial=""
    for i in "$@"; do initial="$initial${initial:+,}e$i=$scheme://$(addr "$i"):2380"; done
    for i in "$@"; do
      a=$(addr "$i")
      mkdir -p "$dir/etcd.$i"
      # Up again after down: a fresh member, as after the first up.
      [ -s "$dir/etcd.$i/data-dir" ] && [ -d "$(cat "$dir/etcd.$i/data-dir")" ] ||
        mktemp -d "${ETCD_DATA_ROOT:-/dev/shm}/aml-etcd.XXXXXX" >"$dir/etcd.$i/data-dir"
      if [ -n "${ETCD_TLS_DIR:-}" ]; then
        t=$ETCD_TLS_DIR
        tls_client=(--cert-file "$t/member.$i.pem" --key-file "$t/member.$i.key"
          --trusted-ca-file "$t/ca.pem" --client-cert-auth)
        tls_peer=(--peer-cert-file "$t/member.$i.pem" --peer-key-file "$t/member.$i.key"
          --peer-trusted-ca-file "$t/ca.pem" --peer-client-cert-auth)
      fi
      bash "$CLUSTER" exec "$net" "$i" "${ETCD_BIN:-etcd}" --name "e$i" --data-dir "$(cat "$dir/etcd.$i/data-dir")/data" \
        --listen-client-urls "$scheme://$a:2379" --advertise-client-urls "$scheme://$a:2379" \
        --listen-peer-urls "$scheme://$a:2380" --initial-advertise-peer-urls "$scheme://$a:2380" \
        ${tls_client[@]+"${tls_client[@]}"} ${tls_peer[@]+"${tls_peer[@]}"} ${ETCD_FLAGS:-} \
        --initial-cluster "$initial" --initial-cluster-state new --initial-cluster-token "$net" \
        --heartbeat-interval 100 --election-timeout 1000 --pre-vote >"$dir/etcd.$i/log" 2>&1 &
      echo $! >"$dir/etcd.$i/pid"
    done
    endpoints=$(for i in "$@"; do echo -n "$(addr "$i"):2379,"; done)
    for _ in $(seq 100); do
      if ctl "$net" "$1" --endpoints "${endpoints%,}" endpoint health >/dev/null 2>&1; then exit 0; fi
      sleep 0.1
    done
    echo "etcd did not become healthy; its logs:" >&2
    tail -n 5 "$dir"/etcd.*/log >&2
    exit 1
    ;;
  auth)
    net=$2 host=$3 user=$4 password=$5
    e="$(addr "$host"):2379"
    ctl "$net" "$host" --endpoints "$e" user add "root:root-$password" >/dev/null
    ctl "$net" "$host" --endpoints "$e" user grant-role root root >/dev/null
    ctl "$net" "$host" --endpoints "$e" role add launchers >/dev/null
    ctl "$net" "$host" --endpoints "$e" role grant-permission launchers --prefix=true readwrite /aml-launch/ >/dev/null
    ctl "$net" "$host" --endpoints "$e" user add "$user:$password" >/dev/null
    ctl "$net" "$host" --endpoints "$e" user grant-role "$user" launchers >/dev/null
    ctl "$net" "$host" --endpoints "$e" user add "stranger:$password" >/dev/null
    ctl "$net" "$host" --endpoints "$e" auth enable >/dev/null
    ;;
  endpoints)
    shift
    list=""
    for i in "$@"; do list="$list${list:+,}$(addr "$i"):2379"; done
    echo "$list"
    ;;
  leader)
    net=$2
    shift 2
    for i in "$@"; do
      # "endpoint status": endpoint, id, version, size, is leader, ...
      line=$(ctl "$net" "$i" --endpoints "$(addr "$i"):2379" endpoint status -w simple 2>/dev/null) || continue
      [ "$(echo "$line" | cut -d, -f5 | tr -d ' ')" = true ] && { echo "$i"; exit 0; }
    done
    exit 1
    ;;
  kill)
    kill -KILL "$(cat "$2/etcd.$3/pid")" 2>/dev/null || true
    ;;
  stop | cont)
    signal=$([ "$1" = stop ] && echo STOP || echo CONT)
    for pidfile in "$2"/etcd.*/pid; do kill -"$signal" "$(cat "$pidfile")" 2>/dev/null || true; done
    ;;
  down)
    for member in "$2"/etcd.*; do
      [ -e "$member/pid" ] && kill -KILL "$(cat "$member/pid")" 2>/dev/null || true
    done
    for member in "$2"/etcd.*; do
      [ -s "$member/data-dir" ] || continue
      pid=$(cat "$member/pid" 2>/dev/null) || pid=""
      for _ in $(seq 50); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
      rm -rf "$(cat "$member/data-dir")" "$member/data-dir"
    done
    ;;
  warnings)
    for log in "$2"/etcd.*/log; do
      [ -e "$log" ] || continue
      echo "--- $log (slow disk, slow peers, elections)"
      grep -E 'slow fdatasync|sync duration|took too long|lost leader|elected leader|is starting a new election|failed to send out heartbeat|overloaded' "$log" | tail -n 12 || true
    done
    ;;
  *)
    echo "usage: $0 up|endpoints|leader|kill|stop|cont|down|warnings ..." >&2
    exit 2
    ;;
esac
