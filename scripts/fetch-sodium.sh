#!/usr/bin/env bash
# Prints the folder of a libsodium source tree for the portable build (cmake
# -DAML_SODIUM_SOURCE_DIR=...; the portable build runs this itself when none is given), which
# compiles libsodium with the portable toolchain: the store's handshake MAC (HMAC-SHA256) and
# nonces come from it, and the release needs glibc 2.17 alone.
# PyNaCl's source distribution on PyPI carries libsodium 1.0.18 (src/libsodium), pinned here by
# its SHA-256. Kept in ~/.cache/aml-launch.
# usage: scripts/fetch-sodium.sh   (PYTHON: the interpreter whose pip downloads; python3)
set -eu
. "$(dirname "$0")/pinned_source.sh"
pinned_source_folder pynacl 1.5.0 PyNaCl-1.5.0.tar.gz \
  8ac7448f09ab85811607bdd21ec2464495ac8b7c66d146bf545b0f08fb9220ba \
  PyNaCl-1.5.0/src/libsodium libsodium-pynacl-1.5.0 src/libsodium/include/sodium.h
