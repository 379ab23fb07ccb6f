#!/usr/bin/env bash
# Command 2 of the README: the whole test suite.
#  1. a clang build with AddressSanitizer + UndefinedBehaviorSanitizer (and fuzzer coverage):
#     every test but those that load the rank library into python3 (an ASan library cannot
#     be loaded there), the style check, the packaging tests (their consumer is built by gcc),
#     the release tests and the container test (they test the release artifacts) and the
#     client frameworks (they test the launcher's environment, not its memory safety)
#  2. the libFuzzer targets, 35 s each: environment parsers, store frames, the store's
#     handshake (a real server with a job secret), console tagging, etcd's gRPC messages;
#     side by side with 3 (they are timed, not counted: they take the minutes the builds leave)
#  3. the builds a user types (Debug, Release, RelWithDebInfo, MinSizeRel with gcc and clang;
#     scripts/build-types.sh): warnings are errors only in this script's own builds
#  4. the main gcc build: the GPU-only tests (reported as skipped where there is no GPU), then
#     every other test (the release artifacts of scripts/release.sh for x86_64 and aarch64 and
#     their tests, the client frameworks among them), ending with ctest's own summary
# Each stage's time is printed at the end (and at a failure, up to it).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
export AML_WARNINGS_AS_ERRORS=ON  # the project's own builds (scripts/build.sh reads it)

stages=()
stage_start=$(date +%s)
stage_name=""
stage() {  # stage NAME: ends the stage before (its time kept), starts NAME
  local now
  now=$(date +%s)
  [ -z "$stage_name" ] || stages+=("$(printf '%5d s  %s' $((now - stage_start)) "$stage_name")")
  stage_name=$1 stage_start=$now
  [ -z "$1" ] || echo "== $1"
}
ctest_log=$(mktemp)
print_stage_times() {
  stage ""
  echo "== stage times"
  printf '%s\n' "${stages[@]}"
  # The closing line stays ctest's own summary.
  grep -E "tests passed|tests failed" "$ctest_log" | tail -1
  rm -f "$ctest_log"
}
trap print_stage_times EXIT

stage "sanitizer build (clang, ASan + UBSan)"
san_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$san_flags -fsanitize=fuzzer-no-link" -DCMAKE_C_FLAGS="$san_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$san_flags" -DCMAKE_SHARED_LINKER_FLAGS="$san_flags" \
  -DAML_BUILD_FUZZERS=ON -DAML_BUILD_BENCHMARKS=OFF -DAML_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build build-san
# The elastic suite under etcd runs once, in the main stage: here etcd's code is covered by its
# own suite (launcher.etcd_rendezvous) and the elastic suite on node 0's store.
(cd build-san && ctest -j"$jobs" --output-on-failure -E 'python_ctypes|torch_allreduce|style\.|packaging\.|container\.|release\.|clients\.|elastic_etcd')

fuzz() {  # fuzz TARGET SEED_DIR: 35 s, starting from the seeds kept in the repository
  local corpus status=0
  corpus=$(mktemp -d)
  cp "$2"/* "$corpus"/
  echo "== fuzzing $1 for 35 s"
  build-san/tests/fuzz/"$1" -max_total_time=35 -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$corpus/" "$corpus" >"$corpus.log" 2>&1 || status=$?
  if [ "$status" != 0 ]; then
    tail -40 "$corpus.log"   # the crash, its stack and the input that caused it
  else
    grep -E "^stat::number_of_executed_units|^Done" "$corpus.log"
  fi
  rm -rf "$corpus" "$corpus.log"
  return "$status"
}
stage "fuzzing (35 s each, one after the other) beside the builds a user types"
fuzz_log=$(mktemp)
(
  fuzz fuzz_env_parsers tests/fuzz/corpus && fuzz fuzz_store_frames tests/fuzz/store_corpus &&
    fuzz fuzz_store_handshake tests/fuzz/handshake_corpus && fuzz fuzz_tag_lines tests/fuzz/tag_corpus &&
    fuzz fuzz_etcd_answers tests/fuzz/etcd_corpus
) >"$fuzz_log" 2>&1 &
fuzzing=$!
scripts/build-types.sh
fuzz_status=0
wait "$fuzzing" || fuzz_status=$?
sed 's/^/fuzz: /' "$fuzz_log"
rm -f "$fuzz_log"
[ "$fuzz_status" = 0 ] || { echo "fuzzing failed (status $fuzz_status)"; exit 1; }

stage "main build (gcc)"
scripts/build.sh
cd build
stage "GPU-only tests"
ctest -L gpu --output-on-failure
stage "every other test"
status=0
(set -o pipefail; ctest -j"$jobs" --output-on-failure -LE gpu 2>&1 | tee "$ctest_log") || status=$?
exit "$status"
