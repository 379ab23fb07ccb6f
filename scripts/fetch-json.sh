#!/usr/bin/env bash
# Prints the include folder of nlohmann_json 3.11.2 (the one Debian bookworm has) for the
# portable build (cmake -DAML_JSON_INCLUDE_DIR=...; the portable build runs this itself when none
# is given), so that it needs no headers of the host. nlohmann_json's repackaging on PyPI, a
# wheel of its headers alone, pinned here by its SHA-256. Kept in ~/.cache/aml-launch.
# usage: scripts/fetch-json.sh   (PYTHON: the interpreter whose pip downloads; python3)
set -eu
. "$(dirname "$0")/pinned_source.sh"
pinned_source_folder nlohmann_json 3.11.2 nlohmann_json-3.11.2-py3-none-any.whl \
  e287e726ba1cf04d8f16bc0a77c05a194bab580cdaa85bf7117f82e3434ab1ec \
  nlohmann_json/include json-3.11.2 nlohmann/json.hpp
