"""Rendezvous of N simulated node agents on loopback, in a network namespace of its own
(somaxconn and the port range are its own to set). Agent processes start, load what they need
(Python and torch for TCPStore), say "ready", and the clock starts when all are released at
once. Each agent: connect + handshake, set its
own address key, add to a counter, get one other agent's key, wait for "go", which a
coordinator sets once the counter reaches N. The aml store and PyTorch's TCPStore run the
same pattern, same N, in one run. Prints medians.

With AML_BASELINE=<an earlier build's directory>, this build's aml store runs against that
build's instead of TCPStore, alternating.

usage: /usr/bin/python3 benchmarks/store_rendezvous.py [BUILD_DIR] [N ...]   (as root)
"""
import os
import statistics
import subprocess
import sys
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SIZES = [int(n) for n in sys.argv[2:]] or [1024, 4096, 16384]
SERVER = f"{BUILD}/benchmarks/store_bench_server"
AGENTS = f"{BUILD}/benchmarks/store_bench_agents"
PER_PROCESS = 8192  # agents per process: each holds one descriptor, ulimit -n is 20,000
RUNS = 3
BASELINE = os.path.abspath(os.environ["AML_BASELINE"]) if os.environ.get("AML_BASELINE") else ""

TORCH_AGENTS = r'''
import sys, threading, datetime
from torch.distributed import TCPStore
port, first, count, total = map(int, sys.argv[1:5])
failed = []
print("ready", flush=True)
sys.stdin.read(1)
def agent(i):
    try:
        s = TCPStore("127.0.0.1", port, total + 2, False, datetime.timedelta(seconds=120))
        s.set(f"node/{i}", "127.1.0.1:29500")
        s.add("arrived", 1)
        s.get(f"node/{(i + 1) % total}")
        s.wait(["go"])
    except Exception as e:
        failed.append(repr(e))
threads = [threading.Thread(target=agent, args=(first + k,)) for k in range(count)]
for t in threads: t.start()
for t in threads: t.join()
if failed:
    print(f"{len(failed)} agents failed, e.g. {failed[0]}", file=sys.stderr); sys.exit(1)
'''

TORCH_SERVER = r'''
import sys, datetime, time, signal
from torch.distributed import TCPStore
s = TCPStore("127.0.0.1", int(sys.argv[1]), int(sys.argv[2]) + 2, True, datetime.timedelta(seconds=120),
             wait_for_workers=False)
print("port", s.port, flush=True)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
while True: time.sleep(1)
'''

TORCH_COORDINATOR = r'''
import sys, datetime, time
from torch.distributed import TCPStore
port, total = int(sys.argv[1]), int(sys.argv[2])
s = TCPStore("127.0.0.1", port, total + 2, False, datetime.timedelta(seconds=120))
while s.add("arrived", 0) < total: time.sleep(0.001)
s.set("go", "1")
'''


def run_once(kind, n):
    token = "bench-token"
    # Port 0: the server takes one the agents' ephemeral ports cannot be holding.
    if kind in ("aml", "aml-before"):
        binary = f"{BASELINE}/benchmarks/store_bench_server" if kind == "aml-before" else SERVER
        server = subprocess.Popen([binary, "0", token], stdout=subprocess.PIPE, text=True)
    else:
        server = subprocess.Popen(["/usr/bin/python3", "-c", TORCH_SERVER, "0", str(n)],
                                  stdout=subprocess.PIPE, text=True)
    port = int(server.stdout.readline().split()[1])
    if kind != "torch":
        coordinator = subprocess.Popen([AGENTS, "coordinate", str(port), token, str(n)])
    else:
        coordinator = subprocess.Popen(["/usr/bin/python3", "-c", TORCH_COORDINATOR, str(port), str(n)])
    per = PER_PROCESS if kind != "torch" else max(1, min(512, n // 8))
    agents = []
    for first in range(0, n, per):
        count = min(per, n - first)
        if kind != "torch":
            cmd = [AGENTS, str(port), token, str(first), str(count), str(n)]
        else:
            cmd = ["/usr/bin/python3", "-c", TORCH_AGENTS, str(port), str(first), str(count), str(n)]
        agents.append(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True))
    for a in agents:
        assert a.stdout.readline().strip() == "ready"
    start = time.perf_counter()
    for a in agents:
        a.stdin.write("g")
        a.stdin.close()
    ok = True
    for a in agents:
        try:
            ok = a.wait(timeout=300) == 0 and ok
        except subprocess.TimeoutExpired:
            a.kill()
            ok = False
    elapsed = time.perf_counter() - start
    coordinator.kill()
    server.terminate()
    stats = server.communicate(timeout=30)[0]
    errors = " ".join((a.stderr.read() or "").strip()[:200] for a in agents if a.returncode)
    return (elapsed if ok else None), stats.strip(), errors


def against_baseline():
    print("| N agents | aml store median [s] | the earlier build's [s] | this / earlier |")
    print("|---:|---:|---:|---:|")
    for n in SIZES:
        times = {"aml": [], "aml-before": []}
        for _ in range(RUNS):
            for kind in times:
                t, _, errors = run_once(kind, n)
                times[kind].append(t if t is not None else float("inf"))
                if errors:
                    print(f"  {kind} n={n}: {errors}", flush=True)
        now, before = statistics.median(times["aml"]), statistics.median(times["aml-before"])
        print(f"| {n} | {now:.3f} | {before:.3f} | {now / before:.2f}x |  (all: {times})",
              flush=True)


def main():
    if BASELINE:
        return against_baseline()
    print("| N agents | aml store median [s] | TCPStore median [s] | TCPStore / aml | aml server memory per connection |")
    print("|---:|---:|---:|---:|---|")
    for n in SIZES:
        aml = [run_once("aml", n) for _ in range(RUNS)]
        torch_runs = [run_once("torch", n) for _ in range(1 if n > 1024 else RUNS)]
        aml_times = [t for t, _, _ in aml if t is not None]
        torch_times = [t for t, _, _ in torch_runs if t is not None]
        aml_text = f"{statistics.median(aml_times):.3f}" if len(aml_times) == len(aml) else "failed"
        if torch_times and len(torch_times) == len(torch_runs):
            torch_text = f"{statistics.median(torch_times):.3f}"
            ratio = f"{statistics.median(torch_times) / statistics.median(aml_times):.1f}x" if aml_times else "-"
        else:
            torch_text, ratio = f"failed ({torch_runs[0][2][:120]})", "-"
        memory = aml[-1][1].split("rss_per_connection_bytes ")[-1].split()[0] + " B RSS" if aml[-1][1] else "?"
        print(f"| {n} | {aml_text} | {torch_text} | {ratio} | {memory} |", flush=True)


if __name__ == "__main__":
    if os.environ.get("AML_BENCH_IN_NETNS") != "1":
        # Re-run inside a fresh network namespace with its own loopback and socket limits.
        script = ("ip link set lo up && sysctl -qw net.core.somaxconn=65535 "
                  "net.ipv4.ip_local_port_range='1024 65535' net.ipv4.tcp_max_syn_backlog=65535 && "
                  f"AML_BENCH_IN_NETNS=1 exec /usr/bin/python3 {os.path.abspath(__file__)} " + " ".join(sys.argv[1:]))
        sys.exit(subprocess.call(["unshare", "--net", "sh", "-c", script]))
    main()
