#!/usr/bin/env bash
# Configures and builds the main tree (gcc, RelWithDebInfo) into build/. Warnings are errors
# when AML_WARNINGS_AS_ERRORS=ON (scripts/test.sh, CI), not in a user's build.
# Its debug information is -g1 (functions and line tables: what gdb's and perf's stacks, the hang
# inquiry's "rank 0 is in read < wait_for_input (blocked_read.cpp:11)" and a crash's backtrace
# need; no local variables): the same code as -g, for 0.71x its CPU (the whole tree: 721 against
# 1,022 CPU-seconds, benchmarks/build_debug_info.sh, RESULTS.md), on the suite's critical path.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DAML_WARNINGS_AS_ERRORS="${AML_WARNINGS_AS_ERRORS:-OFF}" >/dev/null
cmake --build build
