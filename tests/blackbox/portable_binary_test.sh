#!/usr/bin/env bash
# aml-launch runs in any container with a glibc: its dynamic section names nothing but glibc's
# own libraries (the C++ runtime is linked in), and --version says what it is. With MAX_GLIBC
# (the release binary: 2.17), no versioned glibc symbol it needs is newer than that.
# usage: portable_binary_test.sh AML_LAUNCH [MAX_GLIBC]
set -u
BIN=$(realpath "$1")
MAX_GLIBC=${2:-}
. "$(dirname "$0")/assert.sh"
needed=$(readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
check "only glibc is needed at run time ($needed)" bash -c \
  'for lib in $1; do case "$lib" in libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|ld-linux-*.so.2) ;; *) exit 1;; esac; done' _ "$needed"
newest=$(objdump -T "$BIN" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
if [ -n "$MAX_GLIBC" ]; then
  check "no glibc symbol newer than GLIBC_$MAX_GLIBC ($newest)" \
    [ "$(printf '%s\n' "GLIBC_$MAX_GLIBC" "$newest" | sort -V | tail -1)" = "GLIBC_$MAX_GLIBC" ]
fi
check "the newest glibc symbol version it needs is documented in the README ($newest)" \
  grep -q "glibc ${newest#GLIBC_}" "$(dirname "$0")/../../README.md"
version=$("$BIN" --version)
check "--version names the version and the commit ($version)" \
  grep -Eq '^aml-launch [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}|unknown)\)' <<<"$version"
check "--version names the communicator backends built" grep -Eq '^aml::comm backends: ' <<<"$version"
finish
