#!/usr/bin/env bash
# Configures and builds the main tree (gcc, RelWithDebInfo) into build/. Warnings are errors
# when AML_WARNINGS_AS_ERRORS=ON (scripts/test.sh, CI), not in a user's build.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DAML_WARNINGS_AS_ERRORS="${AML_WARNINGS_AS_ERRORS:-OFF}" >/dev/null
cmake --build build
