#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build, run the demo.
set -eu
cd "$(dirname "$0")/.."
scripts/restore-devices.sh  # a /dev/null an earlier test suite turned into a file
scripts/install-deps.sh
scripts/build.sh
scripts/demo.sh
