#!/usr/bin/env bash
# Prints the folder of a Gloo source tree for the portable build (cmake -DAML_GLOO_SOURCE_DIR=...;
# the portable build runs this itself when none is given), which compiles Gloo with the portable
# toolchain: Debian's libgloo is built against libstdc++ and a newer glibc, and the release links
# libc++ against glibc 2.17.
# Gloo has no release of its own on PyPI; Horovod's source distribution carries a copy of it
# (third_party/gloo), pinned here by its SHA-256. Kept in ~/.cache/aml-launch.
# usage: scripts/fetch-gloo.sh   (PYTHON: the interpreter whose pip downloads; python3)
set -eu
. "$(dirname "$0")/pinned_source.sh"
pinned_source_folder horovod 0.28.1 horovod-0.28.1.tar.gz \
  92a43f5a94c43907a56805bad15f19700c62ffc83b7ca483f9e104e229f67ef0 \
  horovod-0.28.1/third_party/gloo gloo-horovod-0.28.1 gloo/allreduce.h
