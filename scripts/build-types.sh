#!/usr/bin/env bash
# The builds a user types, each as `cmake -S . -B DIR -DCMAKE_BUILD_TYPE=T && cmake --build DIR`
# (the default generator): Debug, Release, RelWithDebInfo and MinSizeRel, with gcc and with
# clang. scripts/test.sh builds gcc RelWithDebInfo (warnings as errors) and clang Debug
# (sanitizers) already, tests and benchmarks included; the other six are built here as far as
# their check needs: what a user installs and links (the launcher, aml-preflight, the
# libraries, the examples), without the tests and benchmarks (-DAML_BUILD_TESTS=OFF
# -DAML_BUILD_BENCHMARKS=OFF: two thirds of the compile, already built twice), into
# build-types/ (removed afterwards). A user's build must not treat warnings as errors: checked
# in each configuration's compile commands.
# usage: scripts/build-types.sh [COMPILER-TYPE ...]   (default: the six)
set -eu
cd "$(dirname "$0")/.."
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(gcc-Debug gcc-Release gcc-MinSizeRel clang-Release clang-RelWithDebInfo clang-MinSizeRel)
root=build-types
mkdir -p "$root"
trap 'rm -rf "$root"' EXIT
for config in "${configs[@]}"; do
  compiler=${config%%-*} type=${config#*-}
  case "$compiler" in
    gcc) cc=gcc cxx=g++ ;;
    clang) cc=clang cxx=clang++ ;;
    *) echo "build-types: unknown compiler in $config" >&2; exit 2 ;;
  esac
  dir="$root/$config"
  start=$(date +%s)
  CC=$cc CXX=$cxx cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DAML_BUILD_TESTS=OFF \
    -DAML_BUILD_BENCHMARKS=OFF >"$dir.log" 2>&1 ||
    { tail -30 "$dir.log"; echo "build-types: $config: configure failed"; exit 1; }
  if grep -q -- "-Werror" "$dir/compile_commands.json"; then
    echo "build-types: $config: a user's build treats warnings as errors"; exit 1
  fi
  cmake --build "$dir" -j"$(nproc)" >>"$dir.log" 2>&1 ||
    { grep -E "error|Error" "$dir.log" | head -30; echo "build-types: $config: build failed"; exit 1; }
  echo "build-types: $config built in $(($(date +%s) - start)) s ($(grep -c 'warning:' "$dir.log" || true) warnings)"
  rm -rf "$dir" "$dir.log"
done
