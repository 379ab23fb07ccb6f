#!/usr/bin/env bash
# The builds a user types, each as `cmake -S . -B DIR -DCMAKE_BUILD_TYPE=T && cmake --build DIR`
# (the default generator), where scripts/test.sh's own builds do not cover them: gcc Release
# (README's build from source). The suite's other builds are gcc RelWithDebInfo (the main
# build, NDEBUG), clang Debug (the sanitizer build: no NDEBUG, every assert compiled) and clang
# Release (the release: Zig's clang, NDEBUG, for x86_64 and aarch64); Debug with gcc, MinSizeRel
# and the other compilers' types compile the same code under the same NDEBUG or its absence as
# these (a build type changes optimisation, not what compiles): built on request
# (scripts/build-types.sh gcc-Debug clang-Release gcc-MinSizeRel ...), not by the suite, to
# keep it under 30 minutes. Each is
# built as far as its check needs: what a user installs and links (the launcher,
# aml-preflight, the libraries, the examples), without the tests and benchmarks
# (-DAML_BUILD_TESTS=OFF -DAML_BUILD_BENCHMARKS=OFF: two thirds of the compile, already built
# twice), into build-types/ (removed afterwards), through ccache where it is installed (a second
# run of the suite compiles nothing again). A user's build must not treat warnings as errors
# (checked in each configuration's compile commands) and must print none (a warning fails it).
# usage: scripts/build-types.sh [COMPILER-TYPE ...]   (default: gcc-Release)
set -eu
cd "$(dirname "$0")/.."
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(gcc-Release)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
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
