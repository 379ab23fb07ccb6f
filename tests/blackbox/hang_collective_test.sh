#!/usr/bin/env bash
# A hang named at its collective (DESIGN §6): torch's own flight recorder (torch 2.15 over
# Gloo, hang/collective_train.py playing NCCL's part of the pipe) read by the launcher at the
# hang inquiry, each rank's dump reduced to a digest, compared: the rank that skipped an
# all_reduce is named at its sequence number, an op mismatch is named, a dump that never came
# and a corrupt one are named (the corrupt one, a pickle that would run a command, is refused
# and its command never runs). Beside the stacks' verdict, on stderr, in the summary file's
# hang.collective and in the hang event. torch 1.13's lack of a recorder: launcher.hang.
# The recorder's variables under the names each torch reads (TORCH_FR_* for 2.15, which warns
# at the old ones; TORCH_NCCL_* for 1.13 and where no torch is found), the user's own kept.
# usage: hang_collective_test.sh AML_LAUNCH TORCH_2_15_PYTHON
set -u
BIN=$(realpath "$1")
PY=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
WORK=$(mktemp -d)
MARK="aml-hangc-$$"
trap 'kill -KILL $(grep -l "MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3) 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK"
check "torch 2.15 is installed at $PY (scripts/install-deps.sh)" \
  "$PY" -c 'import torch, sys; sys.exit(torch.__version__ < "2.15")'
# py-spy on the launcher's PATH (the Python stacks without aborting the ranks), no gdb.
PYSPY=$(python3 -c "import os, sysconfig; p = os.path.join(sysconfig.get_path('scripts'), 'py-spy'); print(p if os.access(p, os.X_OK) else '')" 2>/dev/null)
[ -n "$PYSPY" ] || PYSPY=$(command -v py-spy)
mkdir -p "$WORK/bin"
ln -sf "$(command -v sh)" "$WORK/bin/sh"
ln -sf "$PYSPY" "$WORK/bin/py-spy"

# recorder_env ENV... -- COMMAND...: the recorder's variables --dry-run gives the workers.
recorder_env() {
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  env -i PATH=/usr/bin:/bin HOME="$WORK" "${vars[@]}" "$BIN" --hang-timeout 30 --log-dir /logs --dry-run -- "$@" |
    grep -o 'TORCH_\(FR\|NCCL\)_[A-Z_]*=[^ ,"]*' | grep -v ASYNC_ERROR | sort -u | tr '\n' ' '
}
new="TORCH_FR_BUFFER_SIZE=2000 TORCH_FR_DUMP_ON_TIMEOUT=1 TORCH_FR_DUMP_TEMP_FILE=/logs/nccl_trace_rank_ TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/logs/nccl_pipe_rank_ "
old="TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/logs/nccl_pipe_rank_ TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/logs/nccl_trace_rank_ TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_TRACE_BUFFER_SIZE=2000 "
got=$(recorder_env -- "$PY" train.py)
check "torch 2.15's python: the recorder's TORCH_FR_* names ($got)" [ "$got" = "$new" ]
got=$(recorder_env -- /usr/bin/python3 train.py)
check "torch 1.13's python (Debian's): the TORCH_NCCL_* names ($got)" [ "$got" = "$old" ]
printf '#!/usr/bin/env python3\n' >"$WORK/script.py" && chmod +x "$WORK/script.py"
got=$(recorder_env PATH="$(dirname "$PY"):/usr/bin:/bin" -- "$WORK/script.py")
check "a script whose #! line's python3 is torch 2.15's (on PATH): TORCH_FR_* ($got)" [ "$got" = "$new" ]
mkdir -p "$WORK/old-path/torch" && echo "__version__ = '2.4.1'" >"$WORK/old-path/torch/version.py"
got=$(recorder_env PYTHONPATH="$WORK/old-path" -- "$PY" train.py)
check "PYTHONPATH's torch (2.4.1) comes before the environment's: TORCH_NCCL_* ($got)" [ "$got" = "$old" ]
got=$(recorder_env -- sh -c 'exec python3 train.py')
check "no Python seen (a shell): TORCH_NCCL_*, which every torch with a recorder reads ($got)" [ "$got" = "$old" ]
got=$(recorder_env TORCH_NCCL_TRACE_BUFFER_SIZE=50 -- "$PY" train.py)
check "the user's TORCH_NCCL_TRACE_BUFFER_SIZE=50 is kept, and no TORCH_FR_BUFFER_SIZE overrides it ($got)" \
  bash -c '[[ "$1" != *TORCH_FR_BUFFER_SIZE* && "$1" != *TORCH_NCCL_TRACE_BUFFER_SIZE=2000* ]]' _ "$got"

# job CASE: 3 ranks on one node under --hang-timeout 3; $status.
job() {
  env -i TMPDIR="$WORK" PATH="$WORK/bin" MARK="$MARK" HOME="$WORK" HANG_MARKER="$WORK/pickle-ran" "$BIN" \
    --nproc-per-node 3 --hang-timeout 3 --hang-startup-timeout 120 --log-dir "$WORK/$1.logs" \
    --summary-file "$WORK/$1.json" --events-file "$WORK/$1.events" \
    -- "$PY" "$HERE/hang/collective_train.py" "$1" >"$WORK/$1.out" 2>"$WORK/$1.err"
  status=$?
}
# summary_has CASE PYTHON-EXPRESSION: the summary's and the hang event's collective object,
# `c`, satisfies it (the same object in both).
summary_has() {
  python3 - "$WORK/$1.json" "$WORK/$1.events" "$2" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
events = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
hang = [e for e in events if e.get("kind") == "hang"]
assert summary["exit_code"] == 124, summary["exit_code"]
c = summary["hang"]["collective"]
assert hang and hang[-1]["details"]["collective"] == c, (hang, c)
assert eval(sys.argv[3]), json.dumps(c, indent=1)
PY
}

job skip
check "skip: rank 1 skipped an all_reduce: a hang, exit 124 ($status)" [ "$status" = 124 ] || tail -5 skip.err
check "skip: the verdict names rank 1 at the all_reduce it never entered, the others waiting in it" \
  grep -q "flight recorder: rank 1 never entered all_reduce #5 of default_pg (its last: all_reduce #4); the 2 others have waited in it since 20[0-9T:.-]*Z" skip.err ||
  grep aml-launch skip.err
check "skip: ... beside the stacks' verdict, which names rank 1 too (no disagreement said)" bash -c \
  "grep -q 'aml-launch: rank 1 is in <module> (collective_train.py:[0-9]*); ranks 0 and 2 wait in all_reduce' skip.err &&
   ! grep -q 'name different ranks' skip.err" || grep aml-launch skip.err
check "skip: the summary file's hang.collective and the hang event: behind, rank 1, all_reduce #5" \
  summary_has skip 'c["findings"][0]["kind"] == "behind" and c["ranks"] == [1] and c["findings"][0]["call"]["seq"] == 5 and c["findings"][0]["waiting"] == [0, 2]'
check "skip: each rank's dump is in the log directory" bash -c \
  'for r in 0 1 2; do [ -s skip.logs/nccl_trace_rank_$r ] || exit 1; done'
check "skip: torch 2.15 printed no warning of a deprecated variable" bash -c \
  '! grep -h -i "deprecated" skip.err skip.logs/std_log_process_*.txt'

job mismatch
check "mismatch: rank 1 called broadcast where the others called all_reduce: a hang, exit 124 ($status)" \
  [ "$status" = 124 ] || tail -5 mismatch.err
check "mismatch: the verdict names rank 1's broadcast at #5" \
  grep -q "flight recorder: rank 1 called broadcast (#5 of default_pg) where the 2 others called all_reduce" mismatch.err ||
  grep aml-launch mismatch.err
check "mismatch: the summary and the event: a mismatch, rank 1" \
  summary_has mismatch 'c["findings"][0]["kind"] == "mismatch" and c["ranks"] == [1] and c["findings"][0]["odd"][0]["op"] == "broadcast"'

job broken
check "broken dumps: still a hang, exit 124 ($status), and the launcher did not crash" [ "$status" = 124 ] || tail -5 broken.err
check "broken dumps: rank 0's dump never came, rank 2's could not be read (its GLOBAL refused)" \
  grep -q "the dump of rank 0 never came; the dump of rank 2 could not be read (.*opcode 0x63 (GLOBAL) at byte 2: not in the subset" broken.err ||
  grep aml-launch broken.err
check "broken dumps: the command in rank 2's dump never ran (no $WORK/pickle-ran)" [ ! -e "$WORK/pickle-ran" ]
check "broken dumps: ... which Python's pickle would have run" bash -c \
  'python3 -c "import pickle, sys; pickle.load(open(sys.argv[1], \"rb\"))" broken.logs/nccl_trace_rank_2 &&
   [ -e "$1/pickle-ran" ]' _ "$WORK"
check "broken dumps: the summary names them (no_dump [0], unreadable rank 2)" \
  summary_has broken 'c["no_dump"] == [0] and [u["rank"] for u in c["unreadable"]] == [2]'

# --- Two hosts (network namespaces) x 2 ranks, rank 1 (node 0) skips: each node reads its
# ranks' dumps, the digests cross with the ranks' places through node 0's store, and both
# nodes print the same verdict.
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NET="hc$$"
trap 'kill -KILL $(grep -l "MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3) 2>/dev/null; bash "$CLUSTER" down "$NET" 2; rm -rf "$WORK"' EXIT
bash "$CLUSTER" up "$NET" 2
for n in 0 1; do
  bash "$CLUSTER" exec "$NET" $n timeout --preserve-status 120 env -i TMPDIR="$WORK" PATH="$WORK/bin" MARK="$MARK" \
    HOME="$WORK" "$BIN" --nnodes 2 --node-rank $n --nproc-per-node 2 \
    --master-addr "$(bash "$CLUSTER" addr 0)" --master-port 29561 --hang-timeout 3 --hang-startup-timeout 120 \
    --log-dir "$WORK/two.$n.logs" --summary-file "$WORK/two.$n.json" \
    -- "$PY" "$HERE/hang/collective_train.py" skip >"$WORK/two.$n.out" 2>"$WORK/two.$n.err" &
  pids[n]=$!
done
wait ${pids[0]}; s0=$?
wait ${pids[1]}; s1=$?
check "two nodes, rank 1 skips: both exit 124 ($s0 $s1)" [ "$s0 $s1" = "124 124" ] || cat "$WORK"/two.*.err
v0=$(grep -o "flight recorder: .*" "$WORK/two.0.err")
v1=$(grep -o "flight recorder: .*" "$WORK/two.1.err")
check "two nodes: both name rank 1 at all_reduce #5, the 3 others waiting ($v0)" bash -c \
  '[ "$1" = "$2" ] && grep -q "^flight recorder: rank 1 never entered all_reduce #5 of default_pg (its last: all_reduce #4); the 3 others have waited in it since 20[0-9T:.-]*Z$" <<<"$1"' \
  _ "$v0" "$v1" || grep aml-launch "$WORK"/two.*.err
check "two nodes: both summary files hold the same collective object, waiting ranks 0, 2 and 3" python3 -c '
import json, sys
c = [json.load(open(f"{sys.argv[1]}/two.{n}.json"))["hang"]["collective"] for n in (0, 1)]
assert c[0] == c[1] and c[0]["findings"][0]["waiting"] == [0, 2, 3], c' "$WORK"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
