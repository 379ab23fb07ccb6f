#!/usr/bin/env bash
# --metrics-port (DESIGN §6b): Prometheus's text format at /metrics while the launcher runs —
# bad values and a busy port refused before anything starts; a job restarted after a failure
# scraped in its second round (promtool checks the page) while idle and half-sent connections
# flood the server; the port closed at the end; the summary's time split; and a real Prometheus
# server scraping the launchers of a 2-node job on network-namespace hosts, whose query API
# answers a restart counter that went up after a failure. The guide's scrape configs pass
# promtool.
# usage: metrics_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(dirname "$(realpath "$0")")
. "$HERE/assert.sh"
CLUSTER="$HERE/../cluster/netns_cluster.sh"
NAME="amlm$$"
WORK=$(mktemp -d)
cleanup() {
  kill_marked_processes "aml-metrics-$$"
  "$CLUSTER" down "$NAME" 2 >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
export AML_TEST_MARK="aml-metrics-$$" TMPDIR=$WORK
scrape=(/usr/bin/python3 "$HERE/metrics_scrape.py")
url_in() { grep -o 'http://[^ ]*/metrics' "$1" | head -1; }

# 1. Bad values and a busy port: a clear error, nothing started.
expect_status "--metrics-port nope is refused (exit 2)" 2 \
  "$BIN" --metrics-port nope -- touch "$WORK/ran"
expect_status "--metrics-port :9400 (an address left out) is refused (exit 2)" 2 \
  "$BIN" --metrics-port :9400 -- touch "$WORK/ran"
expect_status "--metrics-port 70000 is refused (exit 2)" 2 \
  "$BIN" --metrics-port 70000 -- touch "$WORK/ran"
"$BIN" --metrics-port 70000 -- true 2>"$WORK/bad.err"
check "the error names --metrics-port and what it takes" \
  grep -q -- "--metrics-port.*70000.*0 to 65535" "$WORK/bad.err"
# Per process (mpirun's variables), each launcher serves PORT + its local rank: one past 65535
# is refused before the rendezvous, naming the local rank.
env -i PATH="$PATH" OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=3 \
  OMPI_COMM_WORLD_LOCAL_SIZE=4 "$BIN" --metrics-port 65534 -- touch "$WORK/ran" 2>"$WORK/per_process.err"
status=$?
check "per process, local rank 3, --metrics-port 65534: exit 2, the local rank named, nothing ran ($status)" \
  bash -c '[ "$1" = 2 ] && [ ! -e "$2/ran" ] && grep -q -- "--metrics-port=65534.*PORT + local rank 3 passes 65535" "$2/per_process.err"' \
  _ "$status" "$WORK" || cat "$WORK/per_process.err"
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(30)' >"$WORK/busy.port" &
busy_holder=$!
wait_file "$WORK/busy.port" 10 && sleep 0.2
busy=$(cat "$WORK/busy.port")
"$BIN" --metrics-port "127.0.0.1:$busy" -- touch "$WORK/ran" 2>"$WORK/busy.err"
check "a busy port: exit 2 before any worker ran" test $? = 2 -a ! -e "$WORK/ran"
check "a busy port: said, with the way out (0)" \
  grep -q -- "--metrics-port.*127.0.0.1:$busy.*Address already in use.*--metrics-port 0" "$WORK/busy.err"
kill "$busy_holder" 2>/dev/null

# 2. Rank 1 fails in round 0; round 1 runs: the second round's page. Rank 0 takes 1 s to stop
#    (a recovery of a second).
# Round 1's workers run until the checks on its page are done (the flood last), at most 30 s:
# on a loaded machine those checks outlast a fixed sleep, and a launcher gone refuses the flood.
END_ROUND="$WORK/round1.done" "$BIN" --nproc-per-node 2 --max-restarts 1 --metrics-port 0 \
  --summary-file "$WORK/s.json" -- \
  sh -c 'trap "sleep 1; exit 143" TERM
    [ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$RANK" = 1 ] && { sleep 0.5; exit 3; }
    sleep 4
    for _ in $(seq 280); do [ -e "$END_ROUND" ] && exit 0; sleep 0.1; done' \
  >"$WORK/job.out" 2>"$WORK/job.err" &
job=$!
for _ in $(seq 50); do [ -n "$(url_in "$WORK/job.err")" ] && break; sleep 0.1; done
url=$(url_in "$WORK/job.err")
check "port 0: the launcher says where its metrics are (127.0.0.1 on one node)" \
  test -n "$url" -a "${url#http://127.0.0.1:}" != "$url"
# The page once round 1's workers both run and have been looked at (a slow machine counts the
# round before it starts them, and a worker's first look comes after its start).
"${scrape[@]}" wait "$url" 20 '^aml_launch_round\{run_id="[^"]*"\} 1$' '^aml_launch_workers_running 2$' \
  '^aml_launch_worker_resident_memory_bytes\{rank="0"[^}]*\} [1-9]' \
  '^aml_launch_worker_resident_memory_bytes\{rank="1"[^}]*\} [1-9]' >"$WORK/round1.txt"
check "the second round is scraped" test -s "$WORK/round1.txt"
has() { grep -q -x -- "$1" "$WORK/round1.txt" || { echo "  missing: $1"; return 1; }; }
check "its page: restarts 1 (0 left), rank 1's exit 3, 2 running, the state, a recovery" \
  eval 'has "aml_launch_restarts_total{run_id=\"[^\"]*\"} 1" && has "aml_launch_restarts_left{run_id=\"[^\"]*\"} 0" &&
    has "aml_launch_worker_exits_total{status=\"3\"} 1" && has "aml_launch_workers_running 2" &&
    has "aml_launch_state{state=\"running\"} 1" &&
    has "aml_launch_recovery_duration_seconds_count 1"'
check "each worker's CPU and memory, and the launcher's own, are there" \
  test "$(grep -c '^aml_launch_worker_resident_memory_bytes{rank="[01]",local_rank="[01]"} [1-9]' "$WORK/round1.txt"):$(grep -c '^aml_launch_launcher_resident_memory_bytes [1-9]' "$WORK/round1.txt")" = "2:1"
check "promtool check metrics passes the page" promtool check metrics <"$WORK/round1.txt"
check "every metric on the page is in the guide's table (docs/guides/observability.md)" \
  /usr/bin/python3 -c '
import re, sys
guide = open(sys.argv[2]).read()
names = re.findall(r"^# TYPE (\S+)", open(sys.argv[1]).read(), re.M)
missing = [n for n in names if "`" + n not in guide and ", " + n + "`" not in guide]
assert names and not missing, missing' "$WORK/round1.txt" "$HERE/../../docs/guides/observability.md"
"${scrape[@]}" flood "$url" 40 >"$WORK/flood.txt" 2>"$WORK/flood.err"
check "40 idle and half-sent connections held: a scrape is still answered" \
  grep -q '^aml_launch_round{run_id="[^"]*"} 1$' "$WORK/flood.txt" || tail -3 "$WORK/flood.err"
touch "$WORK/round1.done"
wait "$job"
check "the job ends as it would without metrics (exit 0 after the restart)" test $? = 0
check "the port is closed once the launcher is gone" "${scrape[@]}" closed "$url"
check "the summary's time: a recovery, two rounds, a share that trained" \
  /usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["time"]
assert t["recovery_seconds"] >= 0.9 and len(t["rounds"]) == 2, t
assert 0 < t["trained_share"] < 1 and t["running_seconds"] > 4, t
assert abs(sum(t[k] for k in t if k.endswith("_seconds") and k != "wall_seconds") - t["wall_seconds"]) < 0.01, t' \
  "$WORK/s.json"
check "stderr says where the time went (a restarted job)" \
  grep -q "^aml-launch: time: .* of it the workers running ([0-9]* %); .*recovery 1" "$WORK/job.err"

# 3. AML_LAUNCH_METRICS_PORT gives it too; a run without it serves nothing and says nothing.
AML_LAUNCH_METRICS_PORT=0 "$BIN" --nproc-per-node 1 -- true 2>"$WORK/env.err"
check "AML_LAUNCH_METRICS_PORT=0: served, and said" grep -q "^aml-launch: metrics at http://127.0.0.1:" "$WORK/env.err"
"$BIN" --nproc-per-node 1 -- true 2>"$WORK/none.err"
check "without it: nothing said" test ! -s "$WORK/none.err"

# The guide's scrape configs (examples/prometheus/) are ones Prometheus takes. Debian's
# Prometheus is built without Kubernetes discovery: that one is read as YAML, its relabelling
# keeping the port the guide names.
check "promtool check config takes examples/prometheus/slurm.yml" \
  promtool check config "$HERE/../../examples/prometheus/slurm.yml"
check "examples/prometheus/kubernetes.yml: pods, kept by their port named aml-metrics" \
  /usr/bin/python3 -c '
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))["scrape_configs"][0]
assert job["kubernetes_sd_configs"] == [{"role": "pod"}], job
keep = [r for r in job["relabel_configs"] if r.get("action") == "keep"]
assert keep and keep[0]["regex"] == "aml-metrics", keep' "$HERE/../../examples/prometheus/kubernetes.yml"
# kubernetes.md's manifests give every pod that port, and the launcher serves on it; the
# Operator's PodMonitor scrapes it.
check "examples/kubeflow/: every pod names the port aml-metrics, where its aml-launch --metrics-port serves; the PodMonitor scrapes it" \
  /usr/bin/python3 -c '
import sys, yaml
examples = sys.argv[1]
for name in ("pytorchjob.yaml", "elastic-pytorchjob.yaml"):
    job = yaml.safe_load(open(f"{examples}/kubeflow/{name}"))
    for role, spec in job["spec"]["pytorchReplicaSpecs"].items():
        container = spec["template"]["spec"]["containers"][0]
        command = container["command"]
        port = command[command.index("--metrics-port") + 1]
        assert port == "0.0.0.0:9400", (name, role, port)
        assert container["ports"] == [{"name": "aml-metrics", "containerPort": 9400}], (name, role, container.get("ports"))
monitor = yaml.safe_load(open(f"{examples}/prometheus/podmonitor.yaml"))
assert monitor["kind"] == "PodMonitor" and [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["aml-metrics"], monitor
' "$HERE/../../examples"

# 4. A real Prometheus scrapes the launchers of a 2-node job on two namespace hosts; node 1's
#    worker fails in round 0, after the first scrapes; its query API answers the restart.
if ! "$CLUSTER" up "$NAME" 2 2>"$WORK/up.err"; then
  cat "$WORK/up.err"
  check "network namespaces can be made (ip netns, veth, bridge)" false
  finish; exit
fi
A0=$("$CLUSTER" addr 0) A1=$("$CLUSTER" addr 1)
cat >"$WORK/prometheus.yml" <<YML
global: {scrape_interval: 500ms, scrape_timeout: 400ms}
scrape_configs:
  - job_name: aml-launch
    static_configs: [{targets: ["$A0:9400", "$A1:9400"]}]
YML
prom_port=9090
"$CLUSTER" exec "$NAME" 0 prometheus --config.file="$WORK/prometheus.yml" \
  --storage.tsdb.path="$WORK/tsdb" --web.listen-address="127.0.0.1:$prom_port" \
  >"$WORK/prometheus.log" 2>&1 &
prometheus=$!
query() {  # query PROMQL: the API's JSON answer, from host 0's namespace
  "$CLUSTER" exec "$NAME" 0 /usr/bin/python3 -c '
import sys, urllib.parse, urllib.request
q = urllib.parse.urlencode({"query": sys.argv[2]})
print(urllib.request.build_opener(urllib.request.ProxyHandler({})).open("http://127.0.0.1:%s/api/v1/query?%s" % (sys.argv[1], q), timeout=5).read().decode())' \
    "$prom_port" "$1"
}
ready=no
for _ in $(seq 150); do
  "$CLUSTER" exec "$NAME" 0 /usr/bin/python3 -c 'import urllib.request,sys; urllib.request.build_opener(urllib.request.ProxyHandler({})).open("http://127.0.0.1:%s/-/ready" % sys.argv[1], timeout=1)' \
    "$prom_port" 2>/dev/null && { ready=yes; break; }
  sleep 0.2
done
check "Prometheus is up in host 0's namespace" test "$ready" = yes || { tail -5 "$WORK/prometheus.log"; }
# Its targets come into its scrape loop some seconds after it is ready: the job starts once
# both have been tried (their "up" series exist), so that round 0 is scraped.
for _ in $(seq 100); do
  [ "$(query up 2>/dev/null | grep -o '"instance"' | wc -l)" = 2 ] && break
  sleep 0.2
done
for n in 0 1; do
  "$CLUSTER" exec "$NAME" "$n" env AML_TEST_MARK="$AML_TEST_MARK" TMPDIR="$WORK" \
    "$BIN" --nnodes 2 --node-rank "$n" --nproc-per-node 1 --master-addr "$A0" --master-port 29400 \
    --max-restarts 1 --metrics-port 9400 -- \
    sh -c '[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$NODE_RANK" = 1 ] && { sleep 3; exit 3; }; sleep 6' \
    >"$WORK/node$n.out" 2>"$WORK/node$n.err" &
  node_pid[$n]=$!
done
check "each node serves on its job address (10.77.0.x:9400)" \
  eval 'sleep 1; grep -q "metrics at http://$A0:9400/metrics" "$WORK/node0.err" && grep -q "metrics at http://$A1:9400/metrics" "$WORK/node1.err"'
answered=""
for _ in $(seq 60); do
  answered=$(query 'min_over_time(aml_launch_restarts_total[1m]) == 0 and aml_launch_restarts_total == 1' 2>/dev/null)
  [ "$(printf '%s' "$answered" | grep -o '"instance"' | wc -l)" = 2 ] && break
  sleep 0.5
done
check "Prometheus's query API: both nodes' restart counter went from 0 to 1" \
  test "$(printf '%s' "$answered" | grep -o '"instance"' | wc -l)" = 2 || echo "  answer: $answered"
# observability.md's count of the job's restarts: one series for the job, 1 (a sum over the
# two nodes would say 2).
job_restarts=$(query 'max by (run_id) (aml_launch_restarts_total)' 2>/dev/null)
check "the guide's query, max by (run_id): the job's one restart, once ($job_restarts)" \
  /usr/bin/python3 -c '
import json, sys
result = json.loads(sys.argv[1])["data"]["result"]
assert len(result) == 1 and result[0]["value"][1] == "1" and result[0]["metric"]["run_id"], result' \
  "$job_restarts"
exit3=$(query 'aml_launch_worker_exits_total{status="3"}' 2>/dev/null)
check "and node 1's worker exit 3 is there, from node 1's address" \
  eval 'printf "%s" "$exit3" | grep -q "\"instance\":\"$A1:9400\""' || echo "  answer: $exit3"
wait "${node_pid[0]}"
s0=$?
wait "${node_pid[1]}"
s1=$?
check "the job ends well on both nodes after its restart (exit 0, 0)" test "$s0:$s1" = "0:0" ||
  tail -3 "$WORK/node0.err" "$WORK/node1.err"
kill "$prometheus" 2>/dev/null
wait "$prometheus" 2>/dev/null
finish
