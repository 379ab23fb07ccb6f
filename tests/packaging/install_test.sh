#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds examples/consumer against it, with
# find_package(AmlLaunch CONFIG) and with pkg-config; the installed aml-launch runs the
# consumer on 2 workers, and --preflight finds the installed aml-preflight.
# usage: install_test.sh BUILD_DIR
set -u
BUILD=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
SRC="$HERE/../../examples/consumer"
. "$HERE/../blackbox/assert.sh"
PREFIX=$(mktemp -d)
WORK=$(mktemp -d)
trap 'rm -rf "$PREFIX" "$WORK"' EXIT

check "cmake --install into a fresh prefix" bash -c "cmake --install '$BUILD' --prefix '$PREFIX' >'$WORK/install.log' 2>&1" ||
  cat "$WORK/install.log"
check "configure and build the consumer with find_package(AmlLaunch CONFIG)" bash -c \
  "cmake -S '$SRC' -B '$WORK/build' -G Ninja -DCMAKE_PREFIX_PATH='$PREFIX' >'$WORK/cmake.log' 2>&1 &&
   cmake --build '$WORK/build' >>'$WORK/cmake.log' 2>&1" || cat "$WORK/cmake.log"
out=$(env -i PATH=/usr/bin:/bin "$PREFIX/bin/aml-launch" --nproc-per-node 2 --preflight -- "$WORK/build/consumer" 2>&1)
status=$?
check "the installed aml-launch runs the consumer on 2 workers after the installed preflight ($status)" bash -c \
  '[ "$1" = 0 ] && grep -q "aml-preflight: passed" <<<"$2" &&
   grep -q "consumer: rank 0 of 2, master yes, 2 ranks counted, store: refused as expected" <<<"$2" &&
   grep -q "consumer: rank 1 of 2, master no, 2 ranks counted" <<<"$2"' _ "$status" "$out" || echo "$out"
libdir=$(dirname "$(find "$PREFIX" -name aml-rank.pc)")
flags=$(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs aml-rank)
check "pkg-config aml-rank gives the flags ($flags)" bash -c '[ -n "$1" ] && grep -q -- "-laml_rank" <<<"$1"' _ "$flags"
check "a C program builds with pkg-config's flags" \
  cc "$SRC/consumer_rank.c" -o "$WORK/consumer_rank" $flags -Wl,-rpath,"$(dirname "$libdir")"
out=$(env -i RANK=3 WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 "$WORK/consumer_rank" 2>&1)
check "it reads the rank topology ($out)" grep -q "consumer_rank: rank 3 of 4, master 0" <<<"$out"
check "bash completion is installed and completes flags" bash -c \
  "PATH='$PREFIX/bin':\$PATH; . '$PREFIX/share/bash-completion/completions/aml-launch' && COMP_WORDS=(aml-launch --rdzv-t) && COMP_CWORD=1 &&
   _aml_launch && [ \"\${COMPREPLY[*]}\" = '--rdzv-timeout' ]"
finish
