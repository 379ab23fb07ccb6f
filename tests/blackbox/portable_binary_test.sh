#!/usr/bin/env bash
# aml-launch runs in any container with a glibc: its dynamic section names nothing but glibc's
# own libraries (libstdc++ and libgcc are linked in), and --version says what it is.
# usage: portable_binary_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
needed=$(readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
check "only glibc is needed at run time ($needed)" bash -c \
  'for lib in $1; do case "$lib" in libc.so.6|libm.so.6|ld-linux-*.so.2) ;; *) exit 1;; esac; done' _ "$needed"
newest=$(objdump -T "$BIN" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
check "the newest glibc symbol version it needs is documented in the README ($newest)" \
  grep -q "glibc ${newest#GLIBC_}" "$(dirname "$0")/../../README.md"
version=$("$BIN" --version)
check "--version names the version and the commit ($version)" \
  grep -Eq '^aml-launch [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}|unknown)\)' <<<"$version"
check "--version names the communicator backends built" grep -Eq '^aml::comm backends: ' <<<"$version"
finish
