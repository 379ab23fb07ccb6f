#!/usr/bin/env bash
# What debug information costs a gcc RelWithDebInfo build: the whole tree built from nothing,
# -O2 with -g (CMake's default) and with -g1 (functions and line tables; scripts/build.sh gave it
# until the main build became a user's Release build, with none), in turn, PAIRS times; each
# build's wall time and CPU seconds (user + system of every compile and link), the medians and
# their ratio.
# usage: benchmarks/build_debug_info.sh [PAIRS]   (default 1; the machine otherwise idle)
set -eu
cd "$(dirname "$0")/.."
pairs=${1:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build() {  # build LEVEL: prints "WALL CPU" in seconds (bash's time: every process it waited for)
  local dir="$work/build-$1" TIMEFORMAT="%R %U %S"
  rm -rf "$dir"
  { time {
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 $1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 $1 -DNDEBUG" \
      -DAML_WARNINGS_AS_ERRORS=ON >/dev/null 2>&3 && cmake --build "$dir" >/dev/null 2>&3
  }; } 3>&2 2>"$work/time"  # the report alone to the file; the builds' errors to stderr
  rm -rf "$dir"
  awk '{ printf "%.0f %.0f\n", $1, $2 + $3 }' "$work/time"
}
declare -A wall cpu
for pair in $(seq "$pairs"); do
  for level in -g -g1; do
    read -r w c < <(build "$level")
    echo "pair $pair, $level: ${w} s wall, ${c} CPU-seconds"
    wall[$level]+="$w " cpu[$level]+="$c "
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "| debug information | builds | wall [s] | CPU [s] |"
echo "|---|---:|---:|---:|"
for level in -g -g1; do
  echo "| $level | $pairs | $(median <<<"${wall[$level]}") | $(median <<<"${cpu[$level]}") |"
done
awk -v a="$(median <<<"${cpu[-g1]}")" -v b="$(median <<<"${cpu[-g]}")" \
  'BEGIN { printf "-g1 / -g in CPU: %.2fx\n", a / b }'
