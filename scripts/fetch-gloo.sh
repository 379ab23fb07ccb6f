#!/usr/bin/env bash
# Prints the folder of a Gloo source tree for the release build (cmake -DAML_GLOO_SOURCE_DIR=...),
# which compiles Gloo with the portable toolchain: Debian's libgloo is built against libstdc++
# and a newer glibc, and the release links libc++ against glibc 2.17.
# Gloo has no release of its own on PyPI; Horovod's source distribution carries a copy of it
# (third_party/gloo), pinned here by version and SHA-256. Kept in ~/.cache/aml-launch.
# usage: scripts/fetch-gloo.sh   (PYTHON: the interpreter whose pip downloads; python3)
set -eu
version=0.28.1
sha256=92a43f5a94c43907a56805bad15f19700c62ffc83b7ca483f9e104e229f67ef0
python=${PYTHON:-python3}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/aml-launch/gloo-horovod-$version
if [ ! -f "$cache/gloo/gloo/allreduce.h" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "$python" -m pip download -q --no-deps --no-binary :all: \
    "horovod==$version" -d "$work" >"$work/pip.log" 2>&1 || { cat "$work/pip.log" >&2; exit 1; }
  tarball="$work/horovod-$version.tar.gz"
  echo "$sha256  $tarball" | sha256sum -c --quiet - >&2 ||
    { echo "fetch-gloo: $tarball is not the pinned horovod $version source" >&2; exit 1; }
  tar xzf "$tarball" -C "$work" "horovod-$version/third_party/gloo"
  mkdir -p "$cache"
  rm -rf "$cache/gloo"
  mv "$work/horovod-$version/third_party/gloo" "$cache/gloo"
fi
echo "$cache/gloo"
