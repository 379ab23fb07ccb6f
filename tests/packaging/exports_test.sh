#!/usr/bin/env bash
# What a rank library exports (nm -D --defined-only): `c` only the C ABI of include/aml/rank.h
# (the wheel's, loaded into Python beside other C++ runtimes); `api` that and the C++ functions
# of include/aml/rank.hpp (the CMake build's, which C++ programs link). Nothing else: no
# topology internals, no C++ runtime.
# usage: exports_test.sh LIBRARY c|api
set -u
LIB=$1 MODE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
c_abi=$(sed -n 's/^[a-z ]*[* ]*\(aml_[a-z_]*\)(.*/\1/p' "$HERE/../../include/aml/rank.h" | sort)
cxx_api="aml::Error::message() const
aml::is_master()
aml::local_rank()
aml::local_world_size()
aml::node_rank()
aml::notice()
aml::progress(long)
aml::rank()
aml::to_string(aml::Launch)
aml::topology()
aml::try_topology()
aml::world_size()"
exported=$(nm -D --defined-only "$LIB" | awk '{ $1 = ""; $2 = ""; sub(/^  /, ""); print }' | c++filt |
  sed 's/\[abi:cxx11\]//' | sort)
wanted=$c_abi
[ "$MODE" = api ] && wanted=$(printf '%s\n%s\n' "$c_abi" "$cxx_api" | sort)
check "$(basename "$LIB") exports the C ABI ($(wc -l <<<"$c_abi") functions of rank.h)" \
  bash -c '[ -z "$(comm -23 <(echo "$1") <(echo "$2"))" ]' _ "$c_abi" "$exported" ||
  comm -23 <(echo "$c_abi") <(echo "$exported")
check "$(basename "$LIB") exports nothing else ($MODE: $(wc -l <<<"$exported") symbols)" \
  bash -c '[ "$1" = "$2" ]' _ "$wanted" "$exported" ||
  { echo "not wanted:"; comm -13 <(echo "$wanted") <(echo "$exported") | head -20; }
finish
