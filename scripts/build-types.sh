#!/usr/bin/env bash
# The builds a user types, each as `cmake -S . -B DIR -DCMAKE_BUILD_TYPE=T && cmake --build DIR`
# (the default generator): gcc Release by default, docs/contributing.md's build from source and
# the suite's main build (scripts/build.sh, where the project's own checks add nothing to the
# compile commands). The suite's other builds are clang Debug (the sanitizer build: no NDEBUG,
# every assert compiled) and clang Release (the release: Zig's clang, NDEBUG, for x86_64 and
# aarch64); Debug with gcc, RelWithDebInfo, MinSizeRel and the other compilers' types compile the
# same code under the same NDEBUG or its absence as these (a build type changes optimisation, not
# what compiles): built on request (scripts/build-types.sh gcc-Debug clang-Release
# gcc-RelWithDebInfo ...), not by the suite. Each is built as far as its check needs: what a user
# installs and links (the launcher, aml-preflight, the libraries, the examples), without the
# tests and benchmarks (-DAML_BUILD_TESTS=OFF -DAML_BUILD_BENCHMARKS=OFF), into build-CONFIG/
# (removed afterwards; beside build/, so that through ccache, where it is installed, gcc Release
# takes every object from the main build: ccache names paths relative to each build folder). A
# user's build must not treat warnings as errors (checked in each configuration's compile
# commands) and must print none (a warning fails it; ccache shows a cached object's warnings).
# usage: scripts/build-types.sh [COMPILER-TYPE ...]   (default: gcc-Release)
set -eu
cd "$(dirname "$0")/.."
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(gcc-Release)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
dirs=()
trap 'rm -rf "${dirs[@]}"' EXIT
for config in "${configs[@]}"; do
  compiler=${config%%-*} type=${config#*-}
  case "$compiler" in
    gcc) cc=gcc cxx=g++ ;;
    clang) cc=clang cxx=clang++ ;;
    *) echo "build-types: unknown compiler in $config" >&2; exit 2 ;;
  esac
  dir="build-$config"
  dirs+=("$dir" "$dir.log")
  start=$(date +%s)
  CC=$cc CXX=$cxx cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DAML_BUILD_TESTS=OFF \
    -DAML_BUILD_BENCHMARKS=OFF "${launcher[@]}" >"$dir.log" 2>&1 ||
    { tail -30 "$dir.log"; echo "build-types: $config: configure failed"; exit 1; }
  if grep -q -- "-Werror" "$dir/compile_commands.json"; then
    echo "build-types: $config: a user's build treats warnings as errors"; exit 1
  fi
  cmake --build "$dir" -j"$(nproc)" >>"$dir.log" 2>&1 ||
    { grep -E "error|Error" "$dir.log" | head -30; echo "build-types: $config: build failed"; exit 1; }
  warnings=$(grep -c 'warning:' "$dir.log" || true)
  echo "build-types: $config built in $(($(date +%s) - start)) s ($warnings warnings)"
  # A user's build prints no warning: each is shown, and the build fails the suite.
  if [ "$warnings" != 0 ]; then
    grep -A3 'warning:' "$dir.log" | head -60
    echo "build-types: $config: a user's build printed $warnings warnings"
    exit 1
  fi
  rm -rf "$dir" "$dir.log"
done
