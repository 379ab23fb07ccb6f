#!/usr/bin/env bash
# Builds the Debian package with CPack, installs it with dpkg, runs the installed aml-launch
# (with its man page and preflight) and builds examples/consumer against the installed
# files; removes the package afterwards. Needs root, as CI runs.
# usage: deb_test.sh BUILD_DIR
set -u
BUILD=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
WORK=$(mktemp -d)
cleanup() {
  dpkg -r aml-launch >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
if dpkg-query -W aml-launch >/dev/null 2>&1; then
  check "no aml-launch package is installed before the test (remove it first)" false
  finish; exit
fi
(cd "$WORK" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" >"$WORK/cpack.log" 2>&1)
deb=$(ls "$WORK"/aml-launch_*.deb 2>/dev/null | head -1)
check "cpack -G DEB makes a package ($(basename "${deb:-none}"))" [ -n "$deb" ] || cat "$WORK/cpack.log"
contents=$(dpkg-deb -c "$deb" 2>/dev/null | awk '{print $6}')
check "it holds the binary, the preflight, headers, libraries, CMake config, pkg-config, man page, completion" bash -c '
  for f in ./usr/bin/aml-launch ./usr/bin/aml-preflight ./usr/include/aml/comm.hpp ./usr/lib/libaml_rank.so \
           ./usr/lib/libaml_comm.so ./usr/lib/cmake/AmlLaunch/AmlLaunchConfig.cmake ./usr/lib/pkgconfig/aml-rank.pc \
           ./usr/share/man/man1/aml-launch.1 ./usr/share/bash-completion/completions/aml-launch; do
    grep -qx -- "$f" <<<"$1" || { echo "missing $f"; exit 1; }
  done' _ "$contents"
check "dpkg -i installs it" bash -c "dpkg -i '$deb' >'$WORK/dpkg.log' 2>&1" || cat "$WORK/dpkg.log"
check "the installed aml-launch runs: --version" bash -c '/usr/bin/aml-launch --version | grep -q "^aml-launch "'
check "its man page is there and was made from --help" bash -c \
  'grep -q "^\.TH AML-LAUNCH" /usr/share/man/man1/aml-launch.1 && grep -q "nproc.*per.*node" /usr/share/man/man1/aml-launch.1'
check "configure and build examples/consumer against the installed package (no prefix given)" bash -c \
  "cmake -S '$HERE/../../examples/consumer' -B '$WORK/consumer' -G Ninja >'$WORK/consumer.log' 2>&1 &&
   cmake --build '$WORK/consumer' >>'$WORK/consumer.log' 2>&1" || cat "$WORK/consumer.log"
out=$(env -i PATH=/usr/bin:/bin /usr/bin/aml-launch --nproc-per-node 2 --preflight -- "$WORK/consumer/consumer" 2>&1)
status=$?
check "the installed aml-launch and preflight run the consumer on 2 workers ($status)" bash -c \
  '[ "$1" = 0 ] && grep -q "aml-preflight: passed" <<<"$2" && grep -q "consumer: rank 1 of 2, master no" <<<"$2"' \
  _ "$status" "$out" || echo "$out"
finish
