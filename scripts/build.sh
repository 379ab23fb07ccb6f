#!/usr/bin/env bash
# Configures and builds the main tree (gcc, RelWithDebInfo) into build/.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
