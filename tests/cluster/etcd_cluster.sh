#!/usr/bin/env bash
# A real etcd cluster (Debian's etcd-server) on hosts of a netns cluster (netns_cluster.sh):
# one member per host, client port 2379, peer port 2380, data under DIR.
#   etcd_cluster.sh up NET DIR I J K...   start members on hosts I J K; wait until healthy
#   etcd_cluster.sh endpoints I J K...    "10.77.0.x:2379,..." (what launchers are given)
#   etcd_cluster.sh leader NET I J K...   the host that leads now
#   etcd_cluster.sh kill DIR I            SIGKILL host I's member
#   etcd_cluster.sh stop|cont DIR         SIGSTOP / SIGCONT every member (etcd unreachable)
#   etcd_cluster.sh down DIR              SIGKILL every member
# ETCD_BIN and ETCDCTL_BIN name other builds (etcd 3.5: fetch-etcd35.sh); Debian's by default.
set -eu
CLUSTER="$(dirname "$0")/netns_cluster.sh"
addr() { bash "$CLUSTER" addr "$1"; }
ctl() {  # ctl NET HOST ARGS...: etcdctl (v3) run on that host
  local net=$1 host=$2
  shift 2
  ETCDCTL_API=3 bash "$CLUSTER" exec "$net" "$host" "${ETCDCTL_BIN:-etcdctl}" --dial-timeout 1s --command-timeout 2s "$@"
}

case "$1" in
  up)
    net=$2 dir=$3
    shift 3
    initial=""
    for i in "$@"; do initial="$initial${initial:+,}e$i=http://$(addr "$i"):2380"; done
    for i in "$@"; do
      a=$(addr "$i")
      mkdir -p "$dir/etcd.$i"
      bash "$CLUSTER" exec "$net" "$i" "${ETCD_BIN:-etcd}" --name "e$i" --data-dir "$dir/etcd.$i/data" \
        --listen-client-urls "http://$a:2379" --advertise-client-urls "http://$a:2379" \
        --listen-peer-urls "http://$a:2380" --initial-advertise-peer-urls "http://$a:2380" \
        --initial-cluster "$initial" --initial-cluster-state new --initial-cluster-token "$net" \
        --heartbeat-interval 100 --election-timeout 1000 >"$dir/etcd.$i/log" 2>&1 &
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
    for pidfile in "$2"/etcd.*/pid; do
      [ -e "$pidfile" ] && kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
    done
    ;;
  *)
    echo "usage: $0 up|endpoints|leader|kill|stop|cont|down ..." >&2
    exit 2
    ;;
esac
