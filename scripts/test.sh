#!/usr/bin/env bash
# Command 2 of the README: the whole test suite.
#  1. a clang build with AddressSanitizer + UndefinedBehaviorSanitizer (and fuzzer coverage):
#     every test but those that load the rank library into python3 (an ASan library cannot
#     be loaded there) and the style check
#  2. the libFuzzer target over the environment parsers, 60 s
#  3. the main gcc build and every test, ending with ctest's own summary
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

echo "== sanitizer build (clang, ASan + UBSan)"
san_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$san_flags -fsanitize=fuzzer-no-link" -DCMAKE_C_FLAGS="$san_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$san_flags" -DCMAKE_SHARED_LINKER_FLAGS="$san_flags" \
  -DAML_BUILD_FUZZERS=ON -DAML_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-san
(cd build-san && ctest -j"$jobs" --output-on-failure -E 'python_ctypes|torch_allreduce|style\.')

echo "== fuzzing the environment parsers for 60 s"
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp tests/fuzz/corpus/* "$corpus"/
build-san/tests/fuzz/fuzz_env_parsers -max_total_time=60 -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$corpus/" "$corpus" 2>&1 | grep -E "^stat::number_of_executed_units|Done"

echo "== main build (gcc) and every test"
scripts/build.sh
cd build
ctest -j"$jobs" --output-on-failure
