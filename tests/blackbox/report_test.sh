#!/usr/bin/env bash
# aml-launch report (DESIGN §6b): a 3-node elastic job on network-namespace hosts with a fourth
# launcher waiting as a spare; node 1's worker fails in round 0, its node is benched
# (--bench-after 1) and the spare takes its seat in round 1. The four event files become one
# HTML page; headless Chromium (Debian's) loads it with no network: its DOM has a row per
# launcher and the failure, bench and spare-taken marks, and its screenshot shows them (the
# bars' and the failure's colours, row by row), at 1,280 x 800 with no horizontal scroll, each
# row labelled as its own. Also: a job of milliseconds has an axis that reads so, a page of
# 1,024 launchers folds its quiet rows, and bad input is refused clearly.
# usage: report_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(dirname "$(realpath "$0")")
. "$HERE/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NAME="amlr$$"
WORK=$(mktemp -d)
cleanup() {
  kill_marked_processes "aml-report-$$"
  "$CLUSTER" down "$NAME" 4 >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
export AML_TEST_MARK="aml-report-$$" TMPDIR=$WORK
py=/usr/bin/python3

# 1. Bad input: said, exit 2.
expect_status "report with no file: exit 2" 2 "$BIN" report
"$BIN" report "$WORK/missing.jsonl" 2>"$WORK/missing.err"
status=$?
check "report of a file that is not there: exit 2, named" \
  eval '[ $status = 2 ] && grep -q "cannot read .*missing.jsonl" "$WORK/missing.err"'
{
  echo "not json"
  echo '{"time":"2026-11-29T10:00:00.000Z","kind":"launch","host":"h","run_id":"r","round":"zero","node_rank":0,"rank":null,"details":{}}'
} >"$WORK/junk.jsonl"
"$BIN" report -o "$WORK/junk.html" "$WORK/junk.jsonl" 2>"$WORK/junk.err"
status=$?
check "report of a file with no event: exit 2, said, no page" \
  eval '[ $status = 2 ] && grep -q "no event in" "$WORK/junk.err" && [ ! -e "$WORK/junk.html" ]'

# 2. The job.
if ! "$CLUSTER" up "$NAME" 4 2>"$WORK/up.err"; then
  cat "$WORK/up.err"
  check "network namespaces can be made (ip netns, veth, bridge)" false
  finish; exit
fi
MASTER=$("$CLUSTER" addr 0)
cat >"$WORK/worker.sh" <<'SH'
#!/bin/sh
# Round 0's node rank 1 fails; every other worker runs 3 s.
if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$GROUP_RANK" = 1 ]; then sleep 1; exit 3; fi
sleep 3
SH
chmod +x "$WORK/worker.sh"
for h in 0 1 2 3; do
  "$CLUSTER" exec "$NAME" "$h" env AML_TEST_MARK="$AML_TEST_MARK" TMPDIR="$WORK" \
    AML_LAUNCH_EVENTS_FILE="$WORK/events.$h.jsonl" AML_LAUNCH_JOB_EVENTS_FILE="$WORK/job.$h.jsonl" \
    "$BIN" --nnodes 3:3 --rdzv-endpoint "$MASTER:29400" --rdzv-id "report-$$" --nproc-per-node 1 \
    --max-restarts 1 --bench-after 1 --rdzv-last-call 1 -- "$WORK/worker.sh" \
    >"$WORK/out.$h" 2>&1 &
  pids[$h]=$!
  [ "$h" = 0 ] && sleep 0.3
  [ "$h" = 2 ] && sleep 1  # the fourth comes when the round has its three: a spare
done
for h in 0 1 2 3; do wait "${pids[$h]}"; done
check "the job: a failure, a node benched, a spare seated" \
  eval 'grep -q "\"kind\":\"spare_waiting\"" "$WORK"/events.*.jsonl &&
    grep -q "\"kind\":\"node_benched\"" "$WORK"/events.*.jsonl &&
    grep -q "\"kind\":\"failure\"" "$WORK"/events.*.jsonl' || tail -n 4 "$WORK"/out.*
"$BIN" report -o "$WORK/report.html" "$WORK"/events.*.jsonl 2>"$WORK/report.err"
check "aml-launch report writes the page, saying what it holds" \
  grep -q "wrote $WORK/report.html: 4 launcher(s), 2 round(s), 1 failure(s)" "$WORK/report.err" ||
  cat "$WORK/report.err"
"$BIN" report -o "$WORK/no/such/folder/r.html" "$WORK"/events.0.jsonl 2>"$WORK/nowrite.err"
status=$?
check "a page that cannot be written: exit 2, said" \
  eval '[ $status = 2 ] && grep -q "cannot write .*no/such/folder/r.html" "$WORK/nowrite.err"'
check "the page needs no network: no src= or href= to anything, no script" \
  eval '! grep -qiE "(src|href)=|<script" "$WORK/report.html"'

# The job's file (every launcher was given one; host 0 serves the store: node 0 of every round)
# draws every node alone: node 0's own row, and the three others as node 0 saw them.
check "the job's file: host 0's alone, with two nodes joining in round 0 and the spare in round 1" \
  eval '[ "$(ls "$WORK"/job.*.jsonl)" = "$WORK/job.0.jsonl" ] &&
    [ "$(grep -c "\"kind\":\"node_joined\",\"node_rank\":0,[^ ]*\"round\":0," "$WORK/job.0.jsonl")" = 2 ] &&
    [ "$(grep -c "\"kind\":\"node_joined\",\"node_rank\":0,[^ ]*\"round\":1," "$WORK/job.0.jsonl")" = 1 ]' ||
  grep -h '"node_joined"' "$WORK"/job.*.jsonl
# Each launcher's own file says the node rank it held in each round; where the two differ, the
# job's file says so (node_moved, its pid, both ranks), and nowhere else.
moves=$($py -c '
import glob, json, sys
work = sys.argv[1]
def lines(path):
    return [json.loads(l) for l in open(path)]
expected = set()
for path in glob.glob(f"{work}/events.*.jsonl"):
    events = lines(path)
    pid = next(e["details"]["pid"] for e in events if e["kind"] == "launch")
    held = {e["round"]: e["node_rank"] for e in events
            if e["kind"] == "rendezvous_formed" and e["details"]["phase"] == "run"}
    if 0 in held and 1 in held and held[0] != held[1] and held[1] != 0:
        expected.add((pid, held[0], held[1]))
written = {(e["details"]["pid"], e["details"]["from_node_rank"], e["details"]["node_rank"])
           for e in lines(f"{work}/job.0.jsonl") if e["kind"] == "node_moved" and e["round"] == 1}
print(f"{len(expected)} expected, {len(written)} written, the same: {expected == written}")
' "$WORK")
check "the job's file: a launcher seated under another node rank in round 1 is written so ($moves)" \
  grep -q "the same: True" <<<"$moves" || grep -h '"node_moved"' "$WORK"/job.*.jsonl
"$BIN" report -o "$WORK/job.html" "$WORK/job.0.jsonl" 2>"$WORK/job-report.err"
check "report of the job's file alone: 4 launchers (3 as node 0 saw them), 2 rounds, the failure" \
  grep -q "wrote $WORK/job.html: 4 launcher(s) (3 as node 0 saw them), 2 round(s), 1 failure(s)" "$WORK/job-report.err" ||
  cat "$WORK/job-report.err"
check "its page: three rows as node 0 saw them, the failure (rank 1, exit code 3) on one of them" \
  $py -c '
import re, sys
page = open(sys.argv[1]).read()
rows = re.split(r"<g class=\"row\"", page)[1:]
assert len(rows) == 4, len(rows)
seen = [r for r in rows if "as node 0 saw it" in r]
assert len(seen) == 3, len(seen)
assert sum(bool(re.search(r"class=\"mark failure\".*?rank 1: exit code 3", r, re.S)) for r in seen) == 1
assert all("class=\"bar" in r for r in rows), "a row without bars"
' "$WORK/job.html"

check "the job's file and node 0's own file hold the same lines, from its launch on" \
  eval 'cmp -s "$WORK/job.0.jsonl" "$WORK/events.0.jsonl" && head -1 "$WORK/job.0.jsonl" | grep -q "\"kind\":\"launch\""' ||
  diff "$WORK/job.0.jsonl" "$WORK/events.0.jsonl" | head -5
check "the job's file alone gives the figures of every node's files together" $py -c '
import re, sys
def figures(path):
    found = dict((n, v) for v, n in re.findall(r"<span class=\"figure\"><b>([^<]*)</b>([^<]*)</span>", open(path).read()))
    return {k: found.get(k) for k in ("launchers", "rounds", "restarts", "failures", "nodes benched", "spares taken")}
alone, together = figures(sys.argv[1]), figures(sys.argv[2])
assert alone == together and None not in alone.values(), (alone, together)
' "$WORK/job.html" "$WORK/report.html"

# 3. Chromium, headless, offline: the DOM and the screenshot.
# A laptop's window: 1,280 x 800.
chrome=(chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions
  --user-data-dir="$WORK/chromium" --window-size=1280,800)
HOME=$WORK timeout 60 "${chrome[@]}" --dump-dom "file://$WORK/report.html" >"$WORK/dom.html" 2>/dev/null
check "Chromium's DOM: 4 rows, a failure mark (rank 1, exit code 3), a bench, a spare taken" \
  $py -c '
import re, sys
dom = open(sys.argv[1]).read()
rows = re.findall(r"<g class=\"row\"", dom)
assert len(rows) == 4, len(rows)
assert re.search(r"class=\"mark failure\".*?rank 1: exit code 3", dom, re.S), "no failure mark"
assert "class=\"mark benched\"" in dom and "class=\"mark spare_taken\"" in dom, "no bench or spare mark"
' "$WORK/dom.html"
check "every mark on the row of the node it concerns: the bench on the benched launcher's row (where it sits out), none on node 0's; marks apart, not on top of each other" \
  $py -c '
import re, sys
page = open(sys.argv[1]).read()
rows = re.split(r"<g class=\"row\"", page)[1:]
marks = [re.findall(r"class=\"mark (\w+)\" transform=\"translate\(([\d.]+),", r) for r in rows]
benched = [i for i, m in enumerate(marks) if any(k == "benched" for k, _ in m)]
assert len(benched) == 1, marks
assert any(k == "sitting_out" for k, _ in marks[benched[0]]), marks[benched[0]]
assert not rows[benched[0]].startswith(" data-node=\"0\""), rows[benched[0]][:80]
for m in marks:
    xs = sorted(float(x) for _, x in m)
    assert all(b - a >= 14 for a, b in zip(xs, xs[1:])), m
' "$WORK/report.html"
check "every row's label is its own (a benched node and the spare in its seat share host and node rank)" \
  $py -c '
import re, sys
labels = re.findall(r"<g class=\"row\"[^>]*><text[^>]*>([^<]*)</text>", open(sys.argv[1]).read())
assert len(labels) == 4 and len(set(labels)) == 4, labels
' "$WORK/report.html"
# The page's width against the window's, as Chromium lays it out: a copy with a script that
# writes both into the page (the report itself has no script).
sed 's|</body>|<script>document.body.insertAdjacentHTML("beforeend", "<p id=widths>" + document.documentElement.scrollWidth + " " + window.innerWidth + "</p>")</script></body>|' \
  "$WORK/report.html" >"$WORK/widths.html"
HOME=$WORK timeout 60 "${chrome[@]}" --dump-dom "file://$WORK/widths.html" >"$WORK/widths.dom" 2>/dev/null
widths=$(sed -n 's|.*<p id="widths">\([0-9]*\) \([0-9]*\)</p>.*|\1 \2|p' "$WORK/widths.dom")
check "the page fits a 1,280 px window: no horizontal scroll (document and window widths: $widths)" \
  bash -c "set -- $widths; [ \$# = 2 ] && [ \$1 -le \$2 ] && [ \$2 -le 1280 ]"
HOME=$WORK timeout 60 "${chrome[@]}" --screenshot="$WORK/report.png" "file://$WORK/report.html" >/dev/null 2>&1
check "Chromium's screenshot: 4 rows of bars, the failure's red, the spare's blue" \
  $py "$HERE/report_pixels.py" "$WORK/report.png" 4
[ -n "${AML_REPORT_SCREENSHOT:-}" ] && cp "$WORK/report.png" "$AML_REPORT_SCREENSHOT"

# 4. A job of a few milliseconds: its axis in milliseconds, no two ticks the same.
printf '%s\n' \
  '{"time":"2026-11-29T10:00:00.000Z","kind":"launch","host":"h","run_id":"quick","round":0,"node_rank":0,"rank":null,"details":{"pid":7}}' \
  '{"time":"2026-11-29T10:00:00.002Z","kind":"round_started","host":"h","run_id":"quick","round":0,"node_rank":0,"rank":null,"details":{}}' \
  '{"time":"2026-11-29T10:00:00.006Z","kind":"end","host":"h","run_id":"quick","round":0,"node_rank":0,"rank":null,"details":{"exit_code":0}}' \
  >"$WORK/quick.jsonl"
"$BIN" report -o "$WORK/quick.html" "$WORK/quick.jsonl" 2>/dev/null
check "a 6 ms job: its axis reads 0 ms to 6 ms, each tick its own" $py -c '
import re, sys
ticks = re.findall(r"<text class=\"tick\"[^>]*>([^<]*)</text>", open(sys.argv[1]).read())
assert ticks == ["%d ms" % i for i in range(7)], ticks
' "$WORK/quick.html"

# 5. 1,024 launchers, three with something to say: the quiet ones fold.
$py - "$WORK/big" <<'PY'
import json, os, sys
folder = sys.argv[1]
os.makedirs(folder)
def line(t, kind, node, details=None, rank=None, rnd=0):
    return json.dumps({"time": "2026-11-29T10:00:%06.3fZ" % t, "kind": kind, "node_rank": node,
                       "host": "n%d" % node, "run_id": "big", "round": rnd, "rank": rank,
                       "details": details or {}}) + "\n"
for n in range(1024):
    with open("%s/events.%d.jsonl" % (folder, n), "w") as f:
        f.write(line(0, "launch", n) + line(1, "round_started", n))
        if n in (7, 500, 1000):
            f.write(line(5, "failure", n, {"status": "exit code 1"}, rank=n))
        f.write(line(9, "round_ended", n) + line(9, "end", n, {"exit_code": 0}))
PY
"$BIN" report -o "$WORK/big.html" "$WORK"/big/events.*.jsonl 2>/dev/null
check "1,024 launchers: 7 rows drawn (3 failures, 4 folded runs of quiet nodes), all counted" \
  $py -c '
import re, sys
page = open(sys.argv[1]).read()
rows = re.findall(r"<g class=\"row\" data-node=\"(\d+)\" data-folded=\"(\d+)\"", page)
assert len(rows) == 7, rows
assert sum(int(f) + 1 for _, f in rows) == 1024, rows
assert "nodes 0-6 (7): nothing to note" in page and page.count("class=\"mark failure\"") == 3
' "$WORK/big.html"
finish
