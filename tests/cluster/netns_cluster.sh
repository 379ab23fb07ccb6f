#!/usr/bin/env bash
# A cluster of test hosts on one machine: N network namespaces joined by a bridge, each with a
# private address (10.77.0.1, .2, ...) on its interface eth0. Only these namespaces and their
# own addresses are ever addressed. Host I is also known by the name NAMEnI inside the
# namespaces, as schedulers such as Slurm name nodes: `exec` binds the cluster's hosts file over
# /etc/hosts in the mount namespace ip netns exec makes for the command (a slave of the
# machine's: nothing it mounts reaches the machine). The hosts files live in a folder of the
# cluster's own under /tmp, never in /etc (ip netns exec's /etc/netns/NAME would be the
# machine's /etc).
#   netns_cluster.sh up NAME N        make hosts NAME-0 .. NAME-(N-1) and the bridge
#   netns_cluster.sh exec NAME I CMD  run CMD on host I
#   netns_cluster.sh hosts NAME I     the hosts file of host I (to bind over /etc/hosts)
#   netns_cluster.sh addr I           the address of host I
#   netns_cluster.sh down NAME N      remove them all (safe to call twice)
set -eu

addr() { echo "10.77.0.$(($1 + 1))"; }
hosts_file() { echo "/tmp/aml-netns-$1/hosts.$2"; }

case "$1" in
  up)
    name=$2 n=$3
    ip netns add "$name-br"
    ip -n "$name-br" link add br0 type bridge
    ip -n "$name-br" link set br0 up
    for i in $(seq 0 $((n - 1))); do
      ip netns add "$name-$i"
      ip link add "$name-v$i" type veth peer name eth0 netns "$name-$i"
      ip link set "$name-v$i" netns "$name-br"
      ip -n "$name-br" link set "$name-v$i" master br0 up
      ip -n "$name-$i" addr add "$(addr "$i")/24" dev eth0
      ip -n "$name-$i" link set eth0 up
      ip -n "$name-$i" link set lo up
    done
    mkdir -p "/tmp/aml-netns-$name"
    for i in $(seq 0 $((n - 1))); do
      {
        echo "127.0.0.1 localhost"
        for j in $(seq 0 $((n - 1))); do echo "$(addr "$j") ${name}n$j"; done
      } >"$(hosts_file "$name" "$i")"
    done
    ;;
  exec)
    name=$2 i=$3
    shift 3
    exec ip netns exec "$name-$i" sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' \
      "$(hosts_file "$name" "$i")" "$@"
    ;;
  hosts)
    hosts_file "$2" "$3"
    ;;
  addr)
    addr "$2"
    ;;
  down)
    name=$2 n=$3
    for i in $(seq 0 $((n - 1))); do
      ip netns del "$name-$i" 2>/dev/null || true
    done
    ip netns del "$name-br" 2>/dev/null || true
    rm -rf "/tmp/aml-netns-$name"
    ;;
  *)
    echo "usage: $0 up|exec|hosts|addr|down ..." >&2
    exit 2
    ;;
esac
