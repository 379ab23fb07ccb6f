#!/usr/bin/env bash
# Prints the include folder of fmt 11.1.2 for the portable build (cmake -DAML_FMT_INCLUDE_DIR=...;
# the portable build runs this itself when none is given), so that it needs no headers of the
# host. fmt has no release of its own on PyPI; LightGBM's source distribution carries a copy of
# it (external_libs/fmt), pinned here by its SHA-256. Kept in ~/.cache/aml-launch.
# usage: scripts/fetch-fmt.sh   (PYTHON: the interpreter whose pip downloads; python3)
set -eu
. "$(dirname "$0")/pinned_source.sh"
pinned_source_folder lightgbm 4.7.0 lightgbm-4.7.0.tar.gz \
  f8e20f682c9aabd000bcf4a7ed8aa6f473c1adfecccae34ec24e823d156f4af0 \
  lightgbm-4.7.0/external_libs/fmt/include fmt-11.1.2 fmt/format.h
