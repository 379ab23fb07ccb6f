#!/usr/bin/env bash
# aml-launch runs in any container with a glibc: its dynamic section names nothing but glibc's
# own libraries (the C++ runtime is linked in), and --version says what it is. With MAX_GLIBC
# (the release binary: 2.17), no versioned glibc symbol it needs is newer than that, and the
# same holds for the release's aml-preflight beside it (Gloo built in, MPI and NCCL opened at
# run time), which --version names.
# usage: portable_binary_test.sh AML_LAUNCH [MAX_GLIBC]
set -u
BIN=$(realpath "$1")
MAX_GLIBC=${2:-}
. "$(dirname "$0")/assert.sh"
glibc_only() {  # glibc_only FILE: its dynamic section and symbol versions ($newest: its newest)
  local name needed
  name=$(basename "$1")
  needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  check "$name: only glibc is needed at run time ($needed)" bash -c \
    'for lib in $1; do case "$lib" in libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|ld-linux-*.so.2) ;; *) exit 1;; esac; done' _ "$needed"
  newest=$(objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
  if [ -n "$MAX_GLIBC" ]; then
    check "$name: no glibc symbol newer than GLIBC_$MAX_GLIBC ($newest)" \
      [ "$(printf '%s\n' "GLIBC_$MAX_GLIBC" "$newest" | sort -V | tail -1)" = "GLIBC_$MAX_GLIBC" ]
  fi
}
glibc_only "$BIN"
check "the newest glibc symbol version it needs is documented in the README ($newest)" \
  grep -q "glibc ${newest#GLIBC_}" "$(dirname "$0")/../../README.md"
if [ -n "$MAX_GLIBC" ]; then
  check "the release's aml-preflight is beside it" [ -x "$(dirname "$BIN")/aml-preflight" ]
  [ ! -x "$(dirname "$BIN")/aml-preflight" ] || glibc_only "$(dirname "$BIN")/aml-preflight"
fi
version=$("$BIN" --version)
check "--version names the version and the commit ($version)" \
  grep -Eq '^aml-launch [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}|unknown)\)' <<<"$version"
check "--version names the communicator backends built" grep -Eq '^aml::comm backends: ' <<<"$version"
check "--version names the target" grep -Eq '^target: (x86_64|aarch64) Linux' <<<"$version"
check "--version names the preflight, or says it is unavailable" grep -Eq '^--preflight: (/.*/aml-preflight \(|unavailable)' <<<"$version"
if [ -n "$MAX_GLIBC" ]; then
  check "the release's --version: a portable build, Gloo built in, MPI and NCCL opened at run time" bash -c \
    'grep -q "glibc 2.17 or newer (portable build)" <<<"$1" && grep -q "^aml::comm backends: gloo mpi nccl$" <<<"$1" &&
     grep -q "(gloo built in; mpi opens Open MPI.s libmpi.so.40; nccl opens libnccl.so.2 and libcuda.so.1" <<<"$1"' _ "$version"
fi
finish
