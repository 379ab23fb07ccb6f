"""A lost node replaced by a hot spare, aml-launch against torchrun's c10d elastic agent
(Debian's python3-torch), side by side in one run: 4 network-namespace hosts
(tests/cluster/netns_cluster.sh), a job of 3 nodes (--nnodes 3:3, one worker each: a torch gloo
all_reduce loop), the fourth host's launcher waiting as the spare. Once every worker of the
first round runs, every process of one member host is SIGKILLed (the node is lost); reported is
the time from that kill until every worker of the next round has started (each worker notes
its start before it imports torch).

torchrun runs with its defaults (--monitor_interval 5 in this version), and again as
"torchrun-0.1" with --monitor_interval 0.1 (its workers watched as often as can be); the store host named
with --rdzv_conf is_host, through benchmarks/torchrun_wrapper.py (Debian's 1.13 on Python 3.11); aml-launch with its defaults (--rdzv-last-call plays no part: the
spare fills the round).

usage: /usr/bin/python3 benchmarks/elastic_replace.py BUILD_DIR [TRIALS]   (as root)
"""
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "..", "tests", "cluster", "netns_cluster.sh")
HOSTS = 4
PY = "/usr/bin/python3"

WORKER = '''
import os, sys, time
with open(f"{os.environ['W']}/up.{os.environ['HOST_ID']}.{os.getpid()}", "w") as f:
    f.write(repr(time.time()))
import torch, torch.distributed as dist
dist.init_process_group("gloo")
while True:
    t = torch.ones(1)
    dist.all_reduce(t)
    time.sleep(0.05)
'''


def marked(mark):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"\0MARK={mark}\0".encode() in b"\0" + f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def kill(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def command(tool, build, host, master, port, run_id, worker):
    if tool == "aml-launch":
        return [f"{build}/launcher/aml-launch", "--nnodes", "3:3", "--nproc-per-node", "1",
                "--rdzv-endpoint", f"{master}:{port}", "--rdzv-id", run_id, "--max-restarts",
                "3", "--", PY, worker]
    # torchrun_wrapper.py: Debian's torchrun 1.13 crashes on Python 3.11 without it.
    # "torchrun-0.1": its monitor looking at the workers every 0.1 s instead of every 5 s.
    fast = ["--monitor_interval", "0.1"] if tool == "torchrun-0.1" else []
    return [PY, os.path.join(HERE, "torchrun_wrapper.py")] + fast + ["--nnodes", "3:3", "--nproc_per_node", "1",
            "--rdzv_backend", "c10d", "--rdzv_endpoint", f"{master}:{port}", "--rdzv_id", run_id,
            "--rdzv_conf", f"is_host={1 if host == 0 else 0}", "--max_restarts", "3", worker]


def started(work, after=0.0):
    """{host: start time} of the workers that started after `after` (a torchrun spare's worker
    has its agent's restart count, 0: rounds are told apart by time)."""
    found = {}
    for f in os.listdir(work):
        if f.startswith("up."):
            with open(f"{work}/{f}") as fh:
                text = fh.read()
            if text and float(text) > after:
                found[int(f.split(".")[1])] = float(text)
    return found


def trial(tool, build, net, master, port, n):
    work = tempfile.mkdtemp(prefix=f"aml-replace-{tool}-")
    worker = f"{work}/worker.py"
    with open(worker, "w") as f:
        f.write(WORKER)
    mark = f"replace-{os.getpid()}-{tool}-{n}"
    procs = []
    for host in range(HOSTS):
        env = ["env", "-i", "PATH=/usr/bin:/bin", f"W={work}", f"HOST_ID={host}",
               f"MARK={mark}-{host}", "HOME=/tmp"]
        # A host name of its own that every host resolves (torchrun gives its workers the
        # agent's host name as MASTER_ADDR): NETnI, as the cluster's hosts files name it.
        procs.append(subprocess.Popen(
            ["bash", CLUSTER, "exec", net, str(host), "unshare", "--uts", "sh", "-c",
             'hostname "$0" && exec "$@"', f"{net}n{host}"] + env +
            command(tool, build, host, master, port, f"{tool}-{n}", worker),
            stdout=subprocess.DEVNULL, stderr=open(f"{work}/host.{host}.err", "wb")))
        time.sleep(0.5 if host == 0 else 0.2)
    deadline = time.time() + 120
    while len(started(work)) < 3 and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(3)  # the first round's all_reduce loop running everywhere
    members = sorted(started(work))
    if len(members) != 3:
        for host in range(HOSTS):
            kill(marked(f"{mark}-{host}"))
        raise SystemExit(f"{tool}: the first round did not start; see {work}/host.*.err")
    victim = next(h for h in members if h != 0)
    killed = time.time()
    kill(marked(f"{mark}-{victim}"))
    deadline = time.time() + 120
    while len(started(work, killed)) < 3 and time.time() < deadline:
        time.sleep(0.02)
    after = started(work, killed)
    replaced = max(after.values()) - killed if len(after) == 3 else None
    spare = next(h for h in range(HOSTS) if h not in members)
    took_part = spare in after
    for host in range(HOSTS):
        kill(marked(f"{mark}-{host}"))
    for p in procs:
        p.wait()
    if not os.environ.get("AML_BENCH_KEEP"):
        subprocess.run(["rm", "-rf", work])
    return replaced, took_part


def main():
    build = os.path.abspath(sys.argv[1])
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    net = f"rp{os.getpid()}"
    subprocess.run(["bash", CLUSTER, "up", net, str(HOSTS)], check=True)
    master = subprocess.run(["bash", CLUSTER, "addr", "0"], capture_output=True,
                            text=True).stdout.strip()
    try:
        tools = ("aml-launch", "torchrun", "torchrun-0.1")
        times = {tool: [] for tool in tools}
        spare_in = {tool: 0 for tool in tools}
        port = 29450
        for n in range(trials):
            for tool in os.environ.get("AML_BENCH_TOOLS", "aml-launch torchrun torchrun-0.1").split():
                port += 1
                replaced, took_part = trial(tool, build, net, master, port, n)
                print(f"trial {n} {tool}: "
                      f"{'%.2f s' % replaced if replaced is not None else 'not replaced'}"
                      f"{', the spare took part' if took_part else ''}", flush=True)
                if replaced is not None:
                    times[tool].append(replaced)
                spare_in[tool] += took_part
        print()
        print("| tool | node lost → every worker of the next round started (median) | runs | "
              "each | the spare in the next round |")
        print("|---|---:|---:|---|---|")
        for tool in tools:
            t = times[tool]
            median = f"{statistics.median(t):.2f} s" if t else "-"
            each = ", ".join(f"{x:.2f}" for x in t)
            print(f"| {tool} | {median} | {len(t)} of {trials} | {each} | "
                  f"{spare_in[tool]} of {trials} |")
        for tool in tools[1:]:
            if times["aml-launch"] and times[tool]:
                ratio = statistics.median(times[tool]) / statistics.median(times["aml-launch"])
                print(f"{tool} / aml-launch: {ratio:.0f}x")
    finally:
        subprocess.run(["bash", CLUSTER, "down", net, str(HOSTS)])


if __name__ == "__main__":
    main()
