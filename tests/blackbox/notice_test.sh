#!/usr/bin/env bash
# Notices of the job's end (issue 55), on one node: a metadata service of the test's own on
# loopback (fake_metadata.py, AML_LAUNCH_METADATA_URL) that speaks Azure's Scheduled Events,
# AWS's spot instance-action or GCP's preempted, and real workers (notice_worker.py) that read
# the notice as aml_launch.notice() gives it.
#  1. Azure Preempt of this VM, 30 s ahead: both workers get SIGUSR1 and the file within 200 ms
#     of the answer that carried it, save and exit 0: the job ends preempted (exit 200), said so,
#     and --summary-file names the notice.
#  2. An event of another VM changes nothing (exit 0).
#  3. A Freeze of 5 s is said and ridden out: the workers are not told (a loop that saves and
#     exits on the notice would end the job for a pause), and the job ends 0.
#  4. A malformed document, a service that never answers, a 1 MiB answer: each named once, and
#     the job runs on to its end (exit 0). (The answer's bound: MetadataTest in the unit tests.)
#  5. No service at all (a refused port): nothing said, nothing changes.
#  6. Workers that ignore the notice: stopped at its deadline less --term-timeout (exit 200).
#  7. --notice-signal USR1: kill -USR1 to the launcher is a notice; AWS's and GCP's formats.
# usage: notice_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
WORK=$(mktemp -d)
READER="$HERE/../../python/aml_launch/_notice.py"
servers=()
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT

serve() {  # serve NAME SCENARIO [AFTER_S] [AHEAD_S]: $PORT of a new fake service
  rm -f "$WORK/$1.port"
  /usr/bin/python3 "$HERE/fake_metadata.py" "$WORK/$1.port" "$2" "vm-under-test" "${3:-1}" "${4:-30}" &
  servers+=($!)
  for _ in $(seq 100); do [ -s "$WORK/$1.port" ] && break; sleep 0.05; done
  PORT=$(cat "$WORK/$1.port")
}
# launch NAME ARGS...: the job (2 workers), its status in $status, its stderr in $WORK/NAME.err
launch() {
  local name=$1
  shift
  rm -f "$WORK"/got.* "$WORK"/up.*
  W="$WORK" AML_LAUNCH_METADATA_URL="http://127.0.0.1:$PORT" timeout 60 "$BIN" --nproc-per-node 2 \
    --summary-file "$WORK/$name.json" "$@" -- /usr/bin/python3 "$HERE/notice_worker.py" "$READER" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  status=$?
}
show() { echo "--- stderr"; cat "$WORK/$1.err"; echo "--- stdout"; cat "$WORK/$1.out"; }

# 1. Preempt of this VM.
serve preempt preempt 1 30
launch preempt --notice-from azure
check "Preempt of this VM: the job ends preempted (exit $status, wanted 200)" [ "$status" = 200 ] || show preempt
check "both workers read the notice: kind, source, node, about 29 s left" bash -c \
  "grep -Eq '^preempt azure-scheduled-events 0 (29|30) ' '$WORK/got.0' && grep -Eq '^preempt azure-scheduled-events 0 (29|30) ' '$WORK/got.1'" ||
  cat "$WORK"/got.*
told=$(cat "$WORK/preempt.port.event" 2>/dev/null || echo 0)
late=$(/usr/bin/python3 -c 'import sys
told = float(sys.argv[1])
worst = 0
for path in sys.argv[2:]:
    f = open(path).read().split()
    worst = max(worst, float(f[4]) - told, float(f[5]) - told)
print(int(worst * 1000))' "$told" "$WORK/got.0" "$WORK/got.1" 2>/dev/null || echo 99999)
check "both got SIGUSR1 and the file within 200 ms of the answer that carried it (${late} ms)" \
  [ "$late" -ge 0 ] && [ "$late" -le 200 ]
check "the launcher says the notice and the preempted end" bash -c \
  "grep -q 'notice: Preempt of vm-under-test (azure-scheduled-events) on node 0' '$WORK/preempt.err' &&
   grep -q 'the job ended for a notice: .*preempted (exit 200' '$WORK/preempt.err'" || show preempt
check "--summary-file names the notice, its source and node" /usr/bin/python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
n = s["notice"]
assert s["exit_code"] == 200 and n["kind"] == "preempt" and n["source"] == "azure-scheduled-events", s
assert n["node_rank"] == 0 and n["preempted"] and not n["stopped_at_deadline"] and n["deadline_unix"] > 0, n' "$WORK/preempt.json"

# 2. Another VM's event.
serve other other-vm 1 30
NOTICE_RUN_S=3 launch other --notice-from azure
check "an event of another VM changes nothing (exit $status, no notice)" bash -c \
  "[ $status = 0 ] && ! ls '$WORK'/got.[01] '$WORK'/got.[01].signal >/dev/null 2>&1 && ! grep -q notice '$WORK/other.err'" || show other

# 3. A Freeze of 5 s.
serve freeze freeze 1 2
NOTICE_RUN_S=4 launch freeze --notice-from azure
check "a Freeze of 5 s is said and ridden out, the workers left alone (exit $status)" bash -c \
  "[ $status = 0 ] && grep -q 'notice: Freeze of vm-under-test .*a pause of 5 s: the job rides it out' '$WORK/freeze.err' &&
   ! ls '$WORK'/got.[01] '$WORK'/got.[01].signal >/dev/null 2>&1" || show freeze

# 4. What a service should not send.
for scenario in malformed hang huge; do
  serve "$scenario" "$scenario"
  t0=$(date +%s%N)
  NOTICE_RUN_S=4 launch "$scenario" --notice-from azure
  ms=$((($(date +%s%N) - t0) / 1000000))
  case $scenario in
    malformed) said="expected a JSON document (it sent <html>" ;;
    hang) said="expected an answer within 2 s" ;;
    huge) said="expected an answer of at most 64 KiB" ;;
  esac
  check "a $scenario answer: named once, and the job runs on to its end (exit $status, $ms ms)" bash -c \
    "[ $status = 0 ] && [ \$(grep -c 'warning: notices: azure-scheduled-events at http://127.0.0.1:$PORT: $said' '$WORK/$scenario.err') = 1 ] &&
     [ $ms -lt 10000 ]" || show "$scenario"
done

# 5. No service at all.
reserve_port PORT
NOTICE_RUN_S=2 launch none --notice-from azure
check "no metadata service (a refused port): nothing said, nothing changes (exit $status)" bash -c \
  "[ $status = 0 ] && ! grep -q notice '$WORK/none.err'" || show none

# 6. Workers that ignore the notice: stopped at the deadline less --term-timeout.
serve deadline preempt 1 4
NOTICE_IGNORE=1 launch deadline --notice-from azure --term-timeout 1
ended=$(date +%s.%N)
# The stop came at the deadline (whole seconds, as Azure writes it) less the 1 s grace.
early=$(/usr/bin/python3 -c 'import json, sys
deadline = json.load(open(sys.argv[1]))["notice"]["deadline_unix"]
print(int((float(sys.argv[2]) - (deadline - 1)) * 1000))' "$WORK/deadline.json" "$ended" 2>/dev/null || echo -99999)
check "workers that ignore it are stopped at the deadline less --term-timeout (exit $status, ended $early ms after it)" bash -c \
  "[ $status = 200 ] && [ $early -ge 0 ] && [ $early -lt 3000 ] &&
   grep -q 'stopped at its deadline' '$WORK/deadline.err'" || show deadline

# 7. --notice-signal, AWS, GCP.
reserve_port PORT
rm -f "$WORK"/up.*  # the last job's: the signal goes once this one's workers are up
( for _ in $(seq 1200); do [ -e "$WORK/up.0" ] && [ -e "$WORK/up.1" ] && break; sleep 0.05; done
  # The launcher's two processes (its guardian and its supervisor), as a scheduler's signal to
  # the task's process group reaches both: one notice.
  for p in $(pgrep -f -- "--summary-file $WORK/signal.json"); do
    [ "$(readlink "/proc/$p/exe")" = "$BIN" ] && kill -USR1 "$p"
  done ) &
launch signal --notice-signal USR1
check "--notice-signal USR1: a notice to every worker, and the job ends preempted (exit $status)" bash -c \
  "[ $status = 200 ] && grep -q '^signal signal 0 none ' '$WORK/got.0' && grep -q '^signal signal 0 none ' '$WORK/got.1'" ||
  show signal
for platform in aws gcp; do
  serve "$platform" "$platform" 1 30
  launch "$platform" --notice-from "$platform"
  source=$([ $platform = aws ] && echo aws-spot || echo gcp-preemption)
  check "$platform's notice: both workers get it, the job ends preempted (exit $status)" bash -c \
    "[ $status = 200 ] && grep -q '^preempt $source 0 ' '$WORK/got.0' && grep -q '^preempt $source 0 ' '$WORK/got.1'" ||
    show "$platform"
done
finish
