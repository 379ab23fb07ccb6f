#!/usr/bin/env bash
# --help, the bash completion, the flag reference and the man page tell the same flags (all come
# from launcher/flag_table.cpp): every spelling --help lists is completed, with its values, and
# is in docs/reference/flags.md and in the man page made from --help; the flags are read from
# --help here, so none can fall behind.
# usage: flags_agree_test.sh AML_LAUNCH COMPLETION_FILE FLAG_REFERENCE [MAN_PAGE]
set -u
BIN=$(realpath "$1")
COMPLETION=$(realpath "$2")
REFERENCE=$(realpath "$3")
MAN=${4:-}
. "$(dirname "$0")/../blackbox/assert.sh"
help=$("$BIN" --help)
# The flag lines: two spaces, then the spellings ("--a, --b SHAPE").
mapfile -t lines < <(grep -E '^  -' <<<"$help")
check "--help lists flags (${#lines[@]})" [ "${#lines[@]}" -gt 40 ]
complete_word() {  # complete_word WORD...: COMPREPLY for the last word, as bash would ask
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _aml_launch; echo "${COMPREPLY[*]}"' \
    _ "$COMPLETION" "$BIN" "$@"
}
missing=() unknown=()
for line in "${lines[@]}"; do
  for spelling in $(grep -oE -- '(^|, )-[-a-zA-Z_]+' <<<"${line#  }" | sed 's/^, //'); do
    got=$(complete_word "$spelling")
    grep -qw -- "$spelling" <<<"$got" || missing+=("$spelling")
  done
done
check "every spelling in --help is completed (${missing[*]:-all})" [ ${#missing[@]} = 0 ]
check "--nproc-per-node's values: auto gpu cpu ($(complete_word --nproc-per-node ''))" \
  bash -c '[ "$(tr " " "\n" <<<"$1" | grep -cxE "auto|gpu|cpu")" = 3 ]' _ "$(complete_word --nproc-per-node '')"
check "torchrun's spelling takes values too: --nproc_per_node g ($(complete_word --nproc_per_node g))" \
  [ "$(complete_word --nproc_per_node g)" = gpu ]
check "--format's values: text json" [ "$(complete_word --format '')" = "text json" ]
check "--preflight=: its backends" [ "$(complete_word --preflight=)" = "--preflight=gloo --preflight=mpi --preflight=nccl" ]
check "an underscore asks for torchrun's spellings: --nproc_" [ "$(complete_word --nproc_)" = "--nproc_per_node" ]
check "after the program, its own words are not aml-launch's flags" \
  bash -c '! grep -q -- "--nnodes" <<<"$1"' _ "$(complete_word --nnodes 2 train.py --nn)"
unlisted=()
for line in "${lines[@]}"; do
  for spelling in $(grep -oE -- '(^|, )-[-a-zA-Z_]+' <<<"${line#  }" | sed 's/^, //'); do
    grep -qF -- "\`$spelling" "$REFERENCE" || unlisted+=("$spelling")
  done
done
check "docs/reference/flags.md names every spelling in --help (${unlisted[*]:-all})" [ ${#unlisted[@]} = 0 ]
if [ -n "$MAN" ]; then
  absent=()
  for line in "${lines[@]}"; do
    for spelling in $(grep -oE -- '(^|, )-[-a-zA-Z_]+' <<<"${line#  }" | sed 's/^, //'); do
      # man escapes each - as \-
      grep -qF -- "$(sed 's/-/\\-/g' <<<"$spelling")" "$MAN" || absent+=("$spelling")
    done
  done
  check "the man page names every spelling in --help (${absent[*]:-all})" [ ${#absent[@]} = 0 ]
fi
finish
