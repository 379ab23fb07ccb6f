#!/usr/bin/env bash
# Black-box tests of supervision (DESIGN §4): no output line lost, per-rank logs, tags and
# filters, orphans and zombies reaped (also as PID 1 in a PID namespace), restarts, --exec,
# --summary-file, --framework tensorflow.
# usage: supervision_test.sh AML_LAUNCH LINE_WRITER
set -u
BIN=$(realpath "$1")
WRITER=$(realpath "$2")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
# What the launcher, torch (torchrun's torchelastic_* logs), JAX and TensorFlow write to
# TMPDIR goes with the test's files.
export TMPDIR="$WORK"
trap 'rm -rf "$WORK"' EXIT
clean() { env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" "$@"; }
py=/usr/bin/python3

# --- 100,000 numbered lines: every line on the console and in the log file, whole and in
# order. Two workers writing at once (tags keep them apart), and one worker that SIGKILLs
# itself right after its last write.
lines_ok() {  # lines_ok CONSOLE LOGDIR KIND RANKS...
  $py - "$@" <<'PY'
import sys
console, logs, kind, ranks = sys.argv[1], sys.argv[2], sys.argv[3], [int(r) for r in sys.argv[4:]]
suffix = b" \xff\xfe\x80\x00" if kind == "binary" else b""
want = [b"line %d%s" % (i, suffix) for i in range(1, 100001)]
per_rank = {r: [] for r in ranks}
for line in open(console, "rb").read().split(b"\n")[:-1]:
    for r in ranks:
        tag = b"[rank %d] " % r
        if line.startswith(tag):
            per_rank[r].append(line[len(tag):])
for r in ranks:
    assert per_rank[r] == want, f"console rank {r}: {len(per_rank[r])} lines"
    log = open(f"{logs}/std_log_process_{r}.txt", "rb").read().split(b"\n")
    assert log[-1] == b"" and log[:-1] == want, f"log rank {r}: {len(log) - 1} lines"
PY
}
for stream in out err; do
  for kind in text binary; do
    name="$stream-$kind"
    clean "$BIN" --nproc-per-node 2 --log-dir "$WORK/logs-$name" -- "$WRITER" 100000 $stream $kind exit \
      >"$WORK/console-$name.out" 2>"$WORK/console-$name.err"
    check "$name, 2 workers: exit 0" [ $? = 0 ]
    check "$name, 2 workers: 2 x 100,000 lines on the console and in the log files" \
      lines_ok "$WORK/console-$name.$stream" "$WORK/logs-$name" $kind 0 1
    clean "$BIN" --tag '[rank {rank}] ' --log-dir "$WORK/killed-$name" -- "$WRITER" 100000 $stream $kind \
      >"$WORK/killed-$name.out" 2>"$WORK/killed-$name.err"
    check "$name, SIGKILLed after writing: status 137" [ $? = 137 ]
    check "$name, SIGKILLed after writing: all 100,000 lines on the console and in the log file" \
      lines_ok "$WORK/killed-$name.$stream" "$WORK/killed-$name" $kind 0
  done
done

# --- A partial last line is flushed, on a shared console with a newline added (so that the
# next worker's line does not run on from it).
out=$(clean "$BIN" -- sh -c 'printf "no newline at the end"')
check "partial last line is flushed" [ "$out" = "no newline at the end" ]
out=$(clean "$BIN" --nproc-per-node 2 -- sh -c 'printf "no newline $RANK"' | sort)
check "partial last lines of two workers: each on a line of its own" \
  [ "$out" = $'[rank 0] no newline 0\n[rank 1] no newline 1' ]

# --- Tags: default with several workers, none with one, a template, none on request.
out=$(clean "$BIN" --nproc-per-node 2 -- sh -c 'echo hi' | sort)
check "default tag [rank N]" [ "$out" = "$(printf '[rank 0] hi\n[rank 1] hi')" ]
out=$(clean "$BIN" -- sh -c 'echo hi')
check "one worker: no tag" [ "$out" = "hi" ]
out=$(clean "$BIN" --nproc-per-node 2 --tag '{local_rank}/{rank}: ' -- sh -c 'echo hi' | sort)
check "tag template" [ "$out" = "$(printf '0/0: hi\n1/1: hi')" ]
out=$(clean "$BIN" --nproc-per-node 2 --tag none -- sh -c 'echo hi')
check "--tag none" [ "$out" = "$(printf 'hi\nhi')" ]

# --- --local-ranks-filter: the console shows the chosen ranks; the log files get all.
out=$(clean "$BIN" --nproc-per-node 3 --local-ranks-filter 1 --log-dir "$WORK/filter" -- sh -c 'echo rank $RANK')
check "filter shows only local rank 1" [ "$out" = "[rank 1] rank 1" ]
check "filter keeps every log file" bash -c "grep -qx 'rank 0' '$WORK/filter/std_log_process_0.txt' && grep -qx 'rank 2' '$WORK/filter/std_log_process_2.txt'"

# --- With a log file, a worker's stdout is that file (its write is the only copy); the
# console follows the file, and gets none of the stderr lines the launcher adds to it.
clean "$BIN" --nproc-per-node 2 --log-dir "$WORK/direct" -- sh -c \
  'echo out $RANK; echo err $RANK >&2; readlink /proc/self/fd/1; echo out again $RANK' \
  >"$WORK/direct.out" 2>"$WORK/direct.err"
check "stdout is the rank's log file" \
  grep -qx "\[rank 1\] $WORK/direct/std_log_process_1.txt" "$WORK/direct.out"
check "console stdout: the stdout lines only" bash -c "[ \"\$(grep -c err '$WORK/direct.out')\" = 0 ] &&
  grep -qx '\[rank 0\] out again 0' '$WORK/direct.out'"
check "console stderr: the stderr lines" grep -qx '\[rank 1\] err 1' "$WORK/direct.err"
check "log file: both streams" bash -c "grep -qx 'err 0' '$WORK/direct/std_log_process_0.txt' &&
  grep -qx 'out again 0' '$WORK/direct/std_log_process_0.txt'"
out=$(clean "$BIN" --nproc-per-node 2 -- sh -c 'readlink /proc/self/fd/1')
check "without a log file stdout is a pipe (tagged lines)" \
  bash -c "[[ \$(grep -c '^\[rank [01]\] pipe:' <<<'$out') = 2 ]]"
# One untagged worker whose console is a file (or a pipe) still goes through the launcher:
# only whole lines reach the console (mpirun and srun merge their ranks' pipes; 2>&1 merges
# stderr lines), and its stderr lines are in the summary. (On a terminal its stdout is the
# terminal itself: terminal_console.py below.)
clean "$BIN" -- sh -c 'readlink /proc/self/fd/1; echo oops >&2; exit 4' \
  >"$WORK/one.out" 2>"$WORK/one.err"
check "one untagged worker, console a file: stdout through the launcher, stderr in the summary" \
  bash -c "grep -q '^pipe:' '$WORK/one.out' && grep -qx '  | oops' '$WORK/one.err'"

# A console that reads nothing for a while does not hold the workers up: they write 20 MB
# and finish while it reads nothing (up to 30 s: a sanitizer build on a loaded machine took
# over 3), and it still gets every byte afterwards.
clean "$BIN" --nproc-per-node 2 --log-dir "$WORK/slow" -- sh -c \
  "head -c 10000000 /dev/zero | tr '\\\\0' 'x' | fold -w 99; touch '$WORK/slow-done-'\$RANK" |
  { for _ in $(seq 300); do [ -e "$WORK/slow-done-0" ] && [ -e "$WORK/slow-done-1" ] && break; sleep 0.1; done
    [ -e "$WORK/slow-done-0" ] && [ -e "$WORK/slow-done-1" ] && echo finished-first >"$WORK/slow-verdict"
    wc -l >"$WORK/slow-lines"; }
check "slow console: the workers finished before it read anything" [ -e "$WORK/slow-verdict" ]
check "slow console: then every line (2 x 101,011)" [ "$(cat "$WORK/slow-lines")" = 202022 ]

# A console pipe that nobody reads does not stop the launcher: it still hears TERM (and stops
# everything, exit 143) and still stops the job when a worker fails; the log files get all.
# (A blocking write to the console would hold it until the reader went away.)
# STALLED=2: stderr is the pipe nobody reads (stdout a file).
stalled_console() {  # stalled_console EXPECTED_STATUS SIGNAL_AFTER_2S|- AML_ARGS...
  local want=$1 sig=$2; shift 2
  local fifo="$WORK/stalled.fifo" mark="aml-stalled-$$-$RANDOM"
  rm -f "$fifo"; mkfifo "$fifo"
  sleep 30 <>"$fifo" &  # holds the pipe open and never reads it
  local holder=$!
  if [ "${STALLED:-1}" = 2 ]; then
    env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" MARK=$mark "$BIN" "$@" >"$WORK/stalled.out" 2>"$fifo" &
  else
    env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" MARK=$mark "$BIN" "$@" >"$fifo" 2>"$WORK/stalled.err" &
  fi
  local launcher=$! start=$SECONDS
  if [ "$sig" != - ]; then sleep 2; kill -"$sig" $launcher; fi
  local deadline=$((SECONDS + 15))
  while kill -0 $launcher 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  local status=stuck
  if ! kill -0 $launcher 2>/dev/null; then wait $launcher; status=$?; fi
  kill -9 $launcher $holder 2>/dev/null; wait $holder 2>/dev/null
  local left; left=$(grep -l "MARK=$mark" /proc/[0-9]*/environ 2>/dev/null | wc -l)
  [ "$status" = "$want" ] && [ "$left" = 0 ] || { echo "  status $status (want $want), $left left"; grep -l "MARK=$mark" /proc/[0-9]*/environ 2>/dev/null | while IFS=/ read -r _ _ p _; do echo "   $p $(tr "\\0" " " </proc/$p/cmdline)"; done; return 1; }
}
flood='head -c 20000000 /dev/zero | tr "\\0" x | fold -w 99; sleep 60'
check "stalled console: TERM still stops the job (143, nothing left)" \
  stalled_console 143 TERM --nproc-per-node 2 -- sh -c "$flood"
check "stalled console, log files: TERM still stops the job (143, nothing left)" \
  stalled_console 143 TERM --nproc-per-node 2 --log-dir "$WORK/stalled-logs" -- sh -c "$flood"
check "stalled console, log files: they got every line before the stop" \
  bash -c "[ \$(cat '$WORK'/stalled-logs/std_log_process_*.txt | wc -l) = 404040 ]"
quick_flood='head -c 20000000 /dev/zero | tr "\\0" x | fold -w 99'
check "stalled console at the end: given up after --term-timeout, the workers' status (0)" \
  stalled_console 0 - --nproc-per-node 2 --term-timeout 1 --log-dir "$WORK/stalled-end" \
  -- sh -c "$quick_flood"
check "stalled console at the end: TERM ends the catching up at once (143, not 30 s later)" \
  stalled_console 143 TERM --nproc-per-node 2 --log-dir "$WORK/stalled-end-term" \
  -- sh -c "$quick_flood"
check "stalled console: a failing worker still stops the job (exit 5)" \
  stalled_console 5 - --nproc-per-node 2 --term-timeout 1 -- sh -c \
  "[ \$RANK = 1 ] && { sleep 1; exit 5; }; $flood"
check "stalled console: the failure summary names rank 1" grep -q "rank 1 .*exit code 5" "$WORK/stalled.err"
# The failure summary itself goes to stderr after the workers are gone: a stderr nobody reads
# gets --term-timeout to take it, and the --summary-file is written first. (Its last 20 lines
# of 3,000 bytes make a summary larger than what room the full pipe has left.)
stalled_stderr() { STALLED=2 stalled_console "$@"; }
long_lines='head -c 60000 /dev/zero | tr "\\0" y | fold -w 3000'
check "stalled stderr: a failing worker's summary does not hold the launcher (exit 5)" \
  stalled_stderr 5 - --nproc-per-node 2 --term-timeout 1 --summary-file "$WORK/stalled-summary.json" \
  -- sh -c "[ \$RANK = 1 ] && { sleep 1; $long_lines >&2; exit 5; }; { $flood; } >&2"
check "stalled stderr: the summary file names rank 1, exit code 5" \
  /usr/bin/python3 -c "import json, sys; f = json.load(open(sys.argv[1]))['first_failure']
assert (f['rank'], f['exit_code']) == (1, 5), f" "$WORK/stalled-summary.json"

# A terminal as the console: every line comes through it and its shared description is left
# blocking; nobody reading it does not keep TERM from stopping the job.
check "terminal console: every line, tagged, the terminal left as it was" \
  $py "$(dirname "$0")/terminal_console.py" read "$BIN"
check "terminal console, one untagged worker: its stdout is the terminal (isatty)" \
  $py "$(dirname "$0")/terminal_console.py" single "$BIN"
check "terminal console nobody reads: TERM still stops the job (143, nothing left)" \
  $py "$(dirname "$0")/terminal_console.py" stalled "$BIN"
check "Ctrl-C on the controlling terminal: a stop by SIGINT, KeyboardInterrupt handlers ran (130)" \
  $py "$(dirname "$0")/terminal_console.py" ctrlc "$BIN"

# A log file the launcher may write but not read (made by someone else): stdout goes through
# a pipe as without a log file, and nothing is lost either way.
mkdir -p "$WORK/unreadable" && chown nobody "$WORK/unreadable"
touch "$WORK/unreadable/std_log_process_0.txt" && chown nobody "$WORK/unreadable/std_log_process_0.txt"
chmod 200 "$WORK/unreadable/std_log_process_0.txt"
chmod 755 "$WORK"
out=$(clean setpriv --reuid=nobody --regid=nogroup --clear-groups "$BIN" --log-dir "$WORK/unreadable" \
  -- sh -c 'seq 3; readlink /proc/self/fd/1')
check "unreadable log file: the console still gets every line, through a pipe" \
  bash -c "[[ '$out' == \$'1\n2\n3\npipe:'* ]]"
check "unreadable log file: it still gets every line" \
  bash -c "[[ \"\$(head -3 '$WORK/unreadable/std_log_process_0.txt')\" == \$'1\n2\n3' ]]"

# --- Azure ML: per-rank logs default to user_logs/std_log_process_<rank>.txt.
(cd "$WORK" && clean AZUREML_RUN_ID=run_1 "$BIN" --nproc-per-node 2 -- sh -c 'echo azure $RANK' >/dev/null)
check "Azure ML default log layout" bash -c "grep -qx 'azure 1' '$WORK/user_logs/std_log_process_1.txt'"

# --- Orphans: every worker leaves a background child (one escapes its process group with
# setsid); one worker exits 7; nothing of the job is left.
marker="aml-orphan-$$-$RANDOM"
clean MARK=$marker "$BIN" --nproc-per-node 3 -- sh -c \
  'sleep 600 & setsid sleep 600 & [ "$RANK" = 2 ] && { sleep 0.3; exit 7; }; wait' >/dev/null 2>&1
status=$?
check "orphans: exit status of the failing worker (7)" [ $status = 7 ]
left=$(grep -l "MARK=$marker" /proc/[0-9]*/environ 2>/dev/null | wc -l)
check "orphans: no process of the job is left ($left found)" [ "$left" = 0 ]

# --- Clean exit with background daemons left behind: they are killed too.
marker2="aml-daemon-$$-$RANDOM"
clean MARK=$marker2 "$BIN" --nproc-per-node 2 -- sh -c 'setsid sleep 600 & exit 0' >/dev/null 2>&1
status=$?
left=$(grep -l "MARK=$marker2" /proc/[0-9]*/environ 2>/dev/null | wc -l)
check "clean exit: status 0 and no daemon left ($left found)" bash -c "[ $status = 0 ] && [ $left = 0 ]"

# --- Zombies: orphans re-parented to aml-launch are reaped while the job runs, as a
# subreaper and as PID 1 of a PID namespace. Only the launcher's own count: the processes whose
# parent is the worker's parent (the supervising launcher), never the machine's (a test beside
# this one may keep a zombie of its own for a while).
zombie_probe='if [ "$RANK" = 0 ]; then
  launcher=$PPID
  children() {  # children STATE NAME: how many of the launcher'"'"'s children match (patterns)
    n=0
    for f in /proc/[0-9]*/stat; do
      { read -r line < "$f"; } 2>/dev/null || continue  # gone meanwhile: dash says so unless grouped
      name=${line#*\(}; name=${name%\)*}
      set -- ${line##*\) }
      [ "$2" = "$launcher" ] || continue
      case "$1" in $state) ;; *) continue ;; esac
      case "$name" in $want) n=$((n + 1)) ;; esac
    done
    echo $n
  }
  # Each sleep outlives the forks of all 100 on a loaded machine (1 s did not: under the
  # sanitizer stage every one had ended before the count, "adopted=0").
  for i in $(seq 100); do (sleep 4 &); done
  # The orphans are the launcher'"'"'s now (their subreaper): else none could be a zombie of its,
  # and the count below would prove nothing.
  adopted=$(state="*" want=sleep children)
  sleep 5
  # A zombie lives for the instant between its exit and the reaping: only one that stays counts.
  for try in 1 2 3 4 5 6 7 8 9 10; do
    z=$(state=Z want="*" children)
    [ $z = 0 ] && break; sleep 0.1
  done
  [ "$adopted" -ge 100 ] && adopted=all
  echo "adopted=$adopted zombies=$z"
fi'
out=$(clean "$BIN" -- sh -c "$zombie_probe" 2>&1)
check "subreaper: 100 orphans adopted, exited, no zombie of the launcher left ($out)" [ "$out" = "adopted=all zombies=0" ]
if unshare --pid --fork --mount-proc true 2>/dev/null; then
  marker3="aml-pid1-$$-$RANDOM"
  out=$(clean MARK=$marker3 unshare --pid --fork --mount-proc "$BIN" -- sh -c "$zombie_probe; for i in \$(seq 100); do sleep 600 & done; exit 0" 2>&1)
  status=$?
  check "PID 1: 100 orphans adopted and reaped, no zombie ($out)" bash -c "[ $status = 0 ] && [ '$out' = 'adopted=all zombies=0' ]"
  left=$(grep -l "MARK=$marker3" /proc/[0-9]*/environ 2>/dev/null | wc -l)
  check "PID 1: 100 background sleeps gone after exit ($left found)" [ "$left" = 0 ]
  out=$(clean unshare --pid --fork --mount-proc "$BIN" -- sh -c 'echo pid=$$ ppid=$PPID')
  # (The worker is not PID 2: the launcher's store threads took the first ids after it.)
  check "PID 1: aml-launch is PID 1 and the worker's parent ($out)" \
    bash -c "[[ '$out' =~ ^pid=[0-9]+\ ppid=1$ ]] && [ '$out' != 'pid=1 ppid=1' ]"
else
  check "PID namespaces are available for the PID 1 test (unshare --pid)" false
fi

# --- Restarts: the workers fail until the third round; the restart count is in their env.
# Each round's workers meet (files) before failing, so both print before the teardown.
out=$(clean "$BIN" --nproc-per-node 2 --max-restarts 3 --tag none -- sh -c \
  'echo "round $AML_LAUNCH_RESTART_COUNT $TORCHELASTIC_RESTART_COUNT"; touch "$0/r.$AML_LAUNCH_RESTART_COUNT.$RANK"
   while [ ! -e "$0/r.$AML_LAUNCH_RESTART_COUNT.0" ] || [ ! -e "$0/r.$AML_LAUNCH_RESTART_COUNT.1" ]; do sleep 0.01; done
   [ "$AML_LAUNCH_RESTART_COUNT" -ge 2 ] || exit 4' "$WORK" 2>"$WORK/restart.err")
status=$?
check "restarts: succeeds in round 2 (exit $status)" [ $status = 0 ]
check "restarts: rounds 0, 1, 2 each ran both workers" [ "$(sort <<<"$out" | uniq -c | awk '{print $1 $2 $3 $4}' | tr '\n' ,)" = "2round00,2round11,2round22," ]
check "restarts: announced on stderr" grep -q "restarting the workers (restart 2 of 3)" "$WORK/restart.err"
clean "$BIN" --max-restarts 1 -- sh -c 'exit 6' >/dev/null 2>&1
check "restarts: gives up with the failure's status after max restarts" [ $? = 6 ]

# --- --summary-file for a signal death and for a clean run.
clean "$BIN" --nproc-per-node 2 --summary-file "$WORK/summary.json" -- sh -c \
  '[ "$RANK" = 1 ] && { echo "dying now" >&2; kill -SEGV $$; }; sleep 30' >/dev/null 2>&1
check "summary: first failure is rank 1 by SIGSEGV with its stderr" $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
f = s["first_failure"]
assert s["exit_code"] == 139 and f["rank"] == 1 and f["signal_name"] == "SIGSEGV", s
assert f["stderr_tail"][-1] == "dying now" and f["time"].endswith("Z"), f
assert sorted(w["rank"] for w in s["workers"]) == [0, 1], s' "$WORK/summary.json"
clean "$BIN" --summary-file "$WORK/ok.json" -- true
out=$(clean "$BIN" --summary-file /proc/no-such-dir/summary.json -- sh -c 'exit 3' 2>&1); status=$?
check "unwritable --summary-file: said on stderr, the run's status kept (3)" \
  bash -c "[ $status = 3 ] && grep -q 'cannot write --summary-file /proc/no-such-dir/summary.json' <<<'$out'"
check "summary: a clean run" $py -c '
import json, sys; s = json.load(open(sys.argv[1])); assert s["exit_code"] == 0 and s["first_failure"] is None and s["final"], s' "$WORK/ok.json"
# A summary file that may be written but not replaced (its directory is someone else's): it is
# written in place.
mkdir -p "$WORK/locked" && chmod 755 "$WORK/locked" && touch "$WORK/locked/summary.json" &&
  chown nobody "$WORK/locked/summary.json" && chmod 755 "$WORK"
clean setpriv --reuid=nobody --regid=nogroup --clear-groups "$BIN" \
  --summary-file "$WORK/locked/summary.json" -- sh -c 'exit 9' >/dev/null 2>&1
check "summary in a directory it may not write: the file itself is written (exit code 9)" $py -c '
import json, sys; s = json.load(open(sys.argv[1])); assert s["exit_code"] == 9 and s["final"], s' \
  "$WORK/locked/summary.json"
# One srun line starts one launcher per task with the same flags: {rank}, {local_rank} and
# {node_rank} in --summary-file and --log-dir give each its own file (here: 4 tasks, 2 per
# node, as Slurm's variables say; task 2 fails). Each alone (--no-group): their hosts n1 and
# n2 are names only.
for task in 0 1 2 3; do
  clean env SLURM_JOB_ID=77 SLURM_STEP_ID=0 SLURM_PROCID=$task SLURM_NTASKS=4 SLURM_LOCALID=$((task % 2)) \
    SLURM_NODEID=$((task / 2)) "SLURM_STEP_TASKS_PER_NODE=2(x2)" SLURM_STEP_NODELIST="n[1-2]" \
    "$BIN" --no-group --summary-file "$WORK/task.{rank}.{local_rank}.{node_rank}.json" --log-dir "$WORK/tasklogs.{rank}" \
    -- sh -c 'echo "task $RANK"; [ "$RANK" = 2 ] && exit 4; exit 0' >/dev/null 2>&1 &
done
wait
check "srun-style tasks: a --summary-file of their own each ({rank}, {local_rank}, {node_rank})" $py -c '
import json, sys
w = sys.argv[1]
for rank, local, node in ((0, 0, 0), (1, 1, 0), (2, 0, 1), (3, 1, 1)):
    s = json.load(open(f"{w}/task.{rank}.{local}.{node}.json"))
    assert s["exit_code"] == (4 if rank == 2 else 0), (rank, s)
    assert [x["rank"] for x in s["workers"]] == [rank], (rank, s)' "$WORK"
check "srun-style tasks: a --log-dir of their own each" bash -c \
  'for r in 0 1 2 3; do grep -qx "task $r" "$1/tasklogs.$r/std_log_process_$r.txt" || exit 1; done' _ "$WORK"
# Per node: {rank} is the node's (the node's only launcher), {local_rank} 0.
clean env PET_NNODES=1 PET_NODE_RANK=0 "$BIN" --nproc-per-node 2 --summary-file "$WORK/node.{rank}.{local_rank}.{node_rank}.json" -- true
check "per node: {rank} is the node rank, {local_rank} 0" test -f "$WORK/node.0.0.0.json"
# Written at every restart too (not final yet): a launcher killed in a later round leaves the
# last failure on record.
mark="aml-restart-summary-$$-$RANDOM"
(exec env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" MARK=$mark "$BIN" --max-restarts 1 \
  --summary-file "$WORK/restart-summary.json" -- sh -c \
  '[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && { echo "first round" >&2; exit 3; }; touch "$0"; exec sleep 30' \
  "$WORK/second-round" >/dev/null 2>&1) &
launcher=$!
for _ in $(seq 100); do [ -e "$WORK/second-round" ] && break; sleep 0.1; done
# Both of the launcher's processes (its guardian and its supervisor): nobody is left to write
# the file again. The supervisor first: killed second, it could hear its guardian's death in
# between and write its own stop (on a loaded machine it did).
kill -KILL $(pgrep -P $launcher) $launcher; wait $launcher 2>/dev/null
sleep 0.2  # the worker goes with its launcher (parent-death signal)
check "summary at a restart: the killed launcher's worker went with it" \
  bash -c "! grep -lq 'MARK=$mark' /proc/[0-9]*/environ 2>/dev/null"
check "summary at a restart: the first round's failure, not final, when the launcher is killed later" $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
f = s["first_failure"]
assert s["final"] is False and s["exit_code"] == 3 and s["restarts"] == 0, s
assert f["exit_code"] == 3 and f["stderr_tail"] == ["first round"], f' "$WORK/restart-summary.json"

# --- --exec replaces the launcher (the command's parent is the caller), per-process only.
out=$( (clean OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=1 \
  "$BIN" --exec -- sh -c 'echo "$PPID $RANK"'; echo "caller $BASHPID") | tr '\n' ' ')
check "--exec: no launcher in between ($out)" bash -c "set -- \$(echo '$out' | tr '\n' ' '); [ \"\$1\" = \"\$4\" ] && [ \"\$2\" = 0 ]"
expect_status "--exec on a per-node launch is an error" 2 clean "$BIN" --exec --nproc-per-node 2 -- true

# --- --framework tensorflow: every worker gets a TF_CONFIG naming all local workers.
clean "$BIN" --nproc-per-node 3 --framework tensorflow -- sh -c 'echo "$TF_CONFIG" > "$0/tf.$RANK"' "$WORK"
check "TF_CONFIG per worker: 3 workers, own index, distinct ports" $py -c '
import json, sys
cfgs = [json.load(open(f"{sys.argv[1]}/tf.{r}")) for r in range(3)]
workers = cfgs[0]["cluster"]["worker"]
assert len(workers) == 3 and len(set(workers)) == 3, workers
for r, c in enumerate(cfgs):
    assert c["cluster"]["worker"] == workers and c["task"] == {"type": "worker", "index": r}, c' "$WORK"

# --- Setup errors: a log directory that cannot be made, flags that do not fit.
out=$(clean "$BIN" --log-dir /proc/no-such-dir/logs -- touch "$WORK/started" 2>&1); status=$?
check "unusable --log-dir: exit 2 naming it, nothing started" \
  bash -c "[ $status = 2 ] && grep -q -- '--log-dir=/proc/no-such-dir/logs' <<<'$out' && [ ! -e '$WORK/started' ]"
# Node 0 of 2 alone: the rendezvous gives up after --rdzv-timeout and names the missing node.
reserve_port port
alone=$(clean "$BIN" --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port "$port" \
  --rdzv-timeout 0.5 -- true 2>&1); status=$?
check "a node alone: exit 2 after --rdzv-timeout naming node rank 1 ($status: $alone)" \
  bash -c '[ "$1" = 2 ] && grep -q "node rank(s) 1 of 2 did not" <<<"$2"' _ "$status" "$alone"
# Two launchers claim node rank 1 of 2: the second one is refused, naming the first.
reserve_port port
node() { clean "$BIN" --nnodes 2 --node-rank "$1" --master-addr 127.0.0.1 --master-port "$port" --rdzv-timeout 10 -- sleep 2; }
node 0 >/dev/null 2>&1 &
first0=$!
node 1 >/dev/null 2>&1 &
first1=$!
sleep 0.5
twice=$(node 1 2>&1); status=$?
wait $first0; s0=$?
wait $first1; s1=$?
check "a second node rank 1: exit 2 naming the node that has it ($status: $twice)" bash -c \
  '[ "$1" = 2 ] && grep -q "NODE_RANK=1: expected a node rank of its own; node 1 (.*) at 127.0.0.1 joined with it first" <<<"$2"' \
  _ "$status" "$twice"
check "a second node rank 1: the first two nodes run on undisturbed ($s0 $s1)" [ "$s0 $s1" = "0 0" ]
expect_status "--rdzv-timeout that is not a number of seconds is refused" 2 clean "$BIN" --rdzv-timeout soon -- true
expect_status "--framework other is refused" 2 clean "$BIN" --framework mxnet -- true
expect_status "--local-ranks-filter that is not a list is refused" 2 clean "$BIN" --local-ranks-filter 0,x -- true
expect_status "--max-restarts that is not a number is refused" 2 clean "$BIN" --max-restarts -1 -- true

finish
