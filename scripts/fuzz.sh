#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz/), each from its kept corpus in the repository.
#   scripts/fuzz.sh [--seconds N] [TARGET ...]   the long run, by hand: each target for N seconds
#       (default 300) from its kept corpus; then the corpus is merged with what the run found
#       (libFuzzer's -merge=1: the fewest inputs that cover all that both cover) and written back
#       to tests/fuzz/, for a commit. Run it after changing a parser a target reaches.
#   scripts/fuzz.sh --suite [TARGET ...]           what scripts/test.sh runs every time: the kept
#       corpus replayed (every input, so whatever any long run reached is reached again), then a
#       burst of new inputs of a fixed number, a few core-seconds a target, from a seed printed
#       first (-seed=N reruns it: the run's binary, its corpus and -runs). New inputs land in a
#       copy, never in the repository.
# Both need the sanitizer build's fuzzers (build-san: scripts/test.sh's first stage, or the
# cmake line there). A crash prints its stack and the input that caused it, and fails.
set -eu
cd "$(dirname "$0")/.."
build=${AML_FUZZ_BUILD:-build-san}
mode=long seconds=300
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) mode=suite && shift ;;
    --seconds) seconds=$2 && shift 2 ;;
    -h | --help) sed -n '2,14p' "$0" && exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (--suite, --seconds N)" >&2 && exit 2 ;;
    *) break ;;
  esac
done

# target, its kept corpus, and the burst's inputs in --suite: about 45 core-seconds in all on a
# 2-core AMD VM (2026-12-02), the kept inputs replayed among them; the handshake target runs a
# real server, a few hundred inputs a second.
targets=(
  "fuzz_env_parsers tests/fuzz/corpus 15000"
  "fuzz_store_frames tests/fuzz/store_corpus 40000"
  "fuzz_store_handshake tests/fuzz/handshake_corpus 3000"
  "fuzz_tag_lines tests/fuzz/tag_corpus 100000"
  "fuzz_etcd_answers tests/fuzz/etcd_corpus 25000"
  "fuzz_torch_wire tests/fuzz/torch_corpus 20000"
  "fuzz_relay_wire tests/fuzz/relay_corpus 25000"
  "fuzz_flight_dump tests/fuzz/flight_corpus 20000"
)
wanted=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_target() {  # run_target NAME CORPUS BURST
  local name=$1 kept=$2 burst=$3 bin="$build/tests/fuzz/$1" status=0 seed
  if [ ! -x "$bin" ]; then
    echo "fuzz.sh: $bin is missing: build the sanitizer tree first (scripts/test.sh's first stage)" >&2
    return 2
  fi
  mkdir -p "$work/$name/corpus" "$work/$name/found"
  cp "$kept"/* "$work/$name/corpus/"
  # -timeout is wall time; beside the suite's tests at idle priority a target can wait seconds
  # for a core: a hang is still caught at 120 s.
  local common=(-max_len=4096 -timeout=120 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$work/$name/")
  if [ "$mode" = suite ]; then
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    echo "== fuzzing $name: its $(ls "$kept" | wc -l) kept inputs, then new ones, $burst runs in all (-seed=$seed)"
    "$bin" "${common[@]}" -seed="$seed" -runs="$burst" "$work/$name/corpus" >"$work/$name.log" 2>&1 ||
      status=$?
  else
    echo "== fuzzing $name for $seconds s from its $(ls "$kept" | wc -l) kept inputs"
    "$bin" "${common[@]}" -max_total_time="$seconds" "$work/$name/found" "$work/$name/corpus" \
      >"$work/$name.log" 2>&1 || status=$?
  fi
  if [ "$status" != 0 ]; then
    tail -40 "$work/$name.log"  # the crash, its stack and the input that caused it
    echo "fuzz.sh: $name failed (exit $status); the input is in the lines above"
    return "$status"
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^Done|INITED" "$work/$name.log"
  [ "$mode" = suite ] && return 0
  # The kept corpus: its named inputs (each written by hand for a case, kept as they are) and
  # the fewest inputs found by the runs (named by their SHA-1) that add coverage to those.
  local f merged="$work/$name/merged" found_before="$work/$name/found-before"
  mkdir "$merged" "$found_before"
  for f in "$kept"/*; do
    if [[ ${f##*/} =~ ^[0-9a-f]{40}$ ]]; then cp "$f" "$found_before/"; else cp "$f" "$merged/"; fi
  done
  "$bin" -merge=1 -max_len=4096 "$merged" "$found_before" "$work/$name/found" \
    >"$work/$name.merge.log" 2>&1 || { tail -20 "$work/$name.merge.log"; return 1; }
  for f in "$kept"/*; do
    [[ ! ${f##*/} =~ ^[0-9a-f]{40}$ ]] || rm -f "$f"
  done
  for f in "$merged"/*; do
    [[ ! ${f##*/} =~ ^[0-9a-f]{40}$ ]] || cp "$f" "$kept/"
  done
  echo "$name: $(ls "$kept" | wc -l) inputs kept in $kept ($(cat "$kept"/* | wc -c) bytes)"
}

ran=0
for row in "${targets[@]}"; do
  read -r name kept burst <<<"$row"
  if [ ${#wanted[@]} -gt 0 ] && ! printf '%s\n' "${wanted[@]}" | grep -qx "$name"; then
    continue
  fi
  run_target "$name" "$kept" "$burst"
  ran=$((ran + 1))
done
if [ "$ran" = 0 ]; then
  echo "fuzz.sh: no target named ${wanted[*]}; the targets: $(printf '%s\n' "${targets[@]}" | cut -d' ' -f1 | tr '\n' ' ')" >&2
  exit 2
fi
