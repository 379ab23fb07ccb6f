#!/usr/bin/env bash
# Configures and builds the main tree into build/: a user's Release build, as docs/contributing.md
# gives it (`cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build`: gcc, the
# default generator, the unity build), on every core. In the project's own builds
# (AML_WARNINGS_AS_ERRORS=ON: scripts/test.sh, CI) a warning fails it, and each header is also
# compiled alone (AML_CHECK_HEADERS, cmake/HeadersAlone.cmake). The warnings are counted in the
# build's output rather than made errors by -Werror: the compile commands stay a user's, so that
# through ccache scripts/build-types.sh's gcc Release build takes every object from this one,
# and ccache shows a cached object's warnings again.
set -eu
cd "$(dirname "$0")/.."
strict=${AML_WARNINGS_AS_ERRORS:-OFF}
# gcc by name, as scripts/build-types.sh's gcc-Release names it (ccache tells c++ from g++).
export CC=${CC:-gcc} CXX=${CXX:-g++}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DAML_CHECK_HEADERS="$strict" >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cmake --build build --parallel "$(nproc)" 2>&1 | tee "$log" || status=$?
[ "$status" = 0 ] || exit "$status"
warnings=$(grep -c 'warning:' "$log" || true)
if [ "$strict" = ON ] && [ "$warnings" != 0 ]; then
  echo "build: $warnings warnings (AML_WARNINGS_AS_ERRORS=ON: each one fails the build):"
  grep -A3 'warning:' "$log" | head -60
  exit 1
fi
