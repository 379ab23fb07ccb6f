#!/usr/bin/env bash
# A real client: Debian's python3-torch, gloo over env://, 4 workers started by aml-launch.
# usage: torch_allreduce_test.sh AML_LAUNCH RANK_LIBRARY EXAMPLE
set -u
BIN=$1
. "$(dirname "$0")/assert.sh"
if ! /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
  check "python3-torch is installed (scripts/install-deps.sh installs it)" false
  finish; exit
fi
out=$(env -i PATH=/usr/bin:/bin AML_RANK_LIBRARY="$2" "$BIN" --nproc-per-node 4 -- /usr/bin/python3 "$3" 2>&1)
status=$?
echo "$out"
check "4 gloo workers exit 0" [ $status = 0 ]
check "only the master prints the result" [ "$(grep -c 'all_reduce of ranks' <<<"$out")" = 1 ]
check "the master is rank 0 and the sum is right" grep -q '^\[rank 0\] all_reduce of ranks 0..3 = 6 (expected 6): ok' <<<"$out"
finish
