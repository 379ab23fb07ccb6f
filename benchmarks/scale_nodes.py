"""N real aml-launch processes on this machine, one per simulated node (one worker each), node 0
serving the rendezvous store on 127.0.0.1, all in a network namespace of their own (its own
loopback, somaxconn and port range): how the multi-node group holds at scale.

For each N it reports: the rendezvous (from the last launcher's start until every worker ran)
and, for the share of it that is only this machine starting N launchers and workers, the same
time for N launchers that meet nobody (--nnodes 1, otherwise alike),
the idle CPU of node 0's launcher and of a follower's (both of its processes) over 10 s
(AML_SCALE_IDLE_WINDOW), node 0's own memory (PSS of both processes), fail-fast (one worker
SIGKILLed on a middle node: until every launcher exited) beside the same stop of the launchers
that meet nobody (every worker SIGKILLed: this machine's floor for N launchers stopping), when
half of the launchers and node 0's had exited, a launcher's CPU for the stop (its processes'
and its worker's, median), every exit status (all should be 137) and the processes left.
One machine runs all N start-ups: its 2 cores are shared by every launcher and worker.

usage: /usr/bin/python3 benchmarks/scale_nodes.py [--check] BUILD_DIR N [N ...]
(as root: it enters a network namespace of its own with unshare --net)
--check (the CI test at 256): exit 1 unless every launcher exited 137 naming the killed rank,
none spoke of a lost node, and nothing was left.
AML_BASELINE=OTHER_BUILD_DIR: each N is run with that build too, alternating with this one
(AML_SCALE_RUNS times each, 1 unless set), a row per run, labelled.
AML_SCALE_OBSERVE=compare: each N is run twice, side by side: plain, and with every launcher's
events and metrics on (--events-file, --metrics-port 0), node 0 scraped once a second through
its idle window (Prometheus's default is every 15 s).
AML_SCALE_IDLE_WINDOW=SECONDS: how long node 0 at rest is watched (10 unless set; the followers'
signs of life come every third of --node-timeout, 20 s by default: a window of whole periods
measures their cost, not their phase).
"""
import collections
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import supervision as sv  # noqa: E402  (its launcher_processes)


def in_own_namespace(script=__file__):
    """Re-run `script` (with this process's arguments) in a network namespace of its own."""
    if os.environ.get("AML_SCALE_NETNS") == "1":
        return
    env = dict(os.environ, AML_SCALE_NETNS="1")
    setup = ("ip link set lo up && sysctl -qw net.core.somaxconn=65535 "
             "net.ipv4.ip_local_port_range='10000 65000' && exec \"$@\"")
    os.execvpe("unshare", ["unshare", "--net", "sh", "-c", setup, "sh", sys.executable,
                           os.path.abspath(script)] + sys.argv[1:], env)


def raise_descriptor_limit():
    """Node 0's store holds two connections of every follower's (8,206 descriptors at 4,096
    nodes, counted): past about 9,000 launchers that is over a hard limit of 20,000 (node 0
    then evicts unproven connections and says so). The hard limit is raised where this machine
    allows it (node 0's launcher raises its own soft one to it, as it does on a cluster's node
    0); the soft one every process starts with stays."""
    import resource
    try:
        with open("/proc/sys/fs/nr_open") as f:
            ceiling = int(f.read())
        want = min(1 << 20, ceiling)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, want))
    except (OSError, ValueError) as e:
        print("the descriptor limit stays as it is: %s" % e, file=sys.stderr)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError):
        return 0


def cpu_seconds(pid):
    """The CPU time of every thread of PID, to the nanosecond (ticks are 10 ms)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except OSError:
        pass
    return total / 1e9


def with_descendants(pid):
    """PID and every process below it (the launcher's, and its workers: what wait4 counts)."""
    found, i = [pid], 0
    while i < len(found):
        try:
            for task in os.listdir(f"/proc/{found[i]}/task"):
                with open(f"/proc/{found[i]}/task/{task}/children") as f:
                    found.extend(int(c) for c in f.read().split())
        except OSError:
            pass
        i += 1
    return found


def marked(mark):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def busy_ticks():
    """The machine's busy CPU ticks (all cores) and its total ticks so far."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def wait_for_workers(work, n, launchers, logs):
    """Until N workers ran; a launcher that exits first ends the run, its stderr said, the
    others stopped (not a wait until the test's timeout), the run's folder removed."""
    while sum(1 for f in os.listdir(work) if f.startswith("up.")) < n:
        for node, p in enumerate(launchers):
            if p.poll() is not None:
                for other in launchers:
                    other.send_signal(signal.SIGTERM)  # each stops its own workers
                for other in launchers:
                    try:
                        other.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        other.kill()
                        other.wait()
                with open(logs[node]) as log:
                    said = log.read()[-2000:]
                if node != 0:  # node 0's side of it: a follower's error is often node 0's cause
                    with open(logs[0]) as log:
                        said += "\nnode 0 said:\n" + log.read()[-3000:]
                shutil.rmtree(work, ignore_errors=True)  # the run's folder goes with it
                raise SystemExit(f"node {node}'s launcher exited early ({p.returncode}):\n{said}")
        time.sleep(0.05)


def alone(aml, n):
    """N single-node launchers, alike but meeting nobody: from the last start until every
    worker ran, and from a SIGKILL of every worker (one look at /proc, then the kills) until
    every launcher exited: what this machine alone takes to start and stop N of them, the
    floor under the rendezvous and the fail-fast."""
    work = tempfile.mkdtemp(prefix=f"aml-alone-{n}-")
    mark = f"{os.getpid()}-alone-{n}"
    env = {"PATH": "/usr/bin:/bin", "W": work, "AML_SCALE_MARK": mark}
    worker = 'touch "$W/up.$RANK.$AML_NODE"; exec sleep 600'
    launchers = []
    logs = []
    for node in range(n):
        logs.append(f"{work}/node.{node}.err")
        with open(logs[-1], "wb") as log:
            launchers.append(subprocess.Popen(
                [aml, "--nnodes", "1", "--nproc-per-node", "1", "--", "sh", "-c", worker],
                env=dict(env, AML_NODE=str(node)), stdout=subprocess.DEVNULL, stderr=log))
    last_started = time.perf_counter()
    wait_for_workers(work, n, launchers, logs)
    all_up = time.perf_counter()
    time.sleep(2)  # settled, as before the fail-fast
    workers = [pid for pid in marked(f"AML_SCALE_MARK={mark}".encode()) if comm(pid) == "sleep"]
    killed = time.perf_counter()
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    for p in launchers:
        p.wait()
    all_exited = time.perf_counter()
    shutil.rmtree(work, ignore_errors=True)
    return all_up - last_started, all_exited - killed


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def scrape_every_second(work, until):
    """Node 0's metrics page, fetched once a second until `until` (perf_counter)."""
    import re
    import urllib.request
    with open(f"{work}/node.0.err") as log:
        url = re.search(r"http://\S+/metrics", log.read()).group(0)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    scrapes = 0
    while time.perf_counter() < until:
        opener.open(url, timeout=5).read()
        scrapes += 1
        time.sleep(max(0.0, min(1.0, until - time.perf_counter())))
    return scrapes


def run(aml, n, observe=False):
    work = tempfile.mkdtemp(prefix=f"aml-scale-{n}-")
    mark = f"AML_SCALE_MARK={os.getpid()}-{n}"
    port = free_port()
    env = {"PATH": "/usr/bin:/bin", "W": work, "AML_SCALE_MARK": mark.split("=", 1)[1]}
    worker = 'touch "$W/up.$RANK"; exec sleep 600'
    launchers = []
    logs = []
    start = time.perf_counter()
    for node in range(n):
        log = open(f"{work}/node.{node}.err", "wb")
        logs.append(log)
        launchers.append(subprocess.Popen(
            [aml, "--nnodes", str(n), "--node-rank", str(node), "--nproc-per-node", "1",
             "--master-addr", "127.0.0.1", "--master-port", str(port), "--rdzv-timeout", "600"] +
            (["--events-file", f"{work}/events.{node}.jsonl", "--metrics-port", "0"] if observe else []) +
            ["--", "sh", "-c", worker], env=env, stdout=subprocess.DEVNULL, stderr=log))
    last_started = time.perf_counter()
    busy_before, total_before = busy_ticks()
    node0_before = sum(cpu_ticks(p) for p in sv.launcher_processes(launchers[0].pid))
    wait_for_workers(work, n, launchers, [f"{work}/node.{node}.err" for node in range(n)])
    all_up = time.perf_counter()
    busy_after, total_after = busy_ticks()
    hz = os.sysconf("SC_CLK_TCK")
    node0_rdzv = (sum(cpu_ticks(p) for p in sv.launcher_processes(launchers[0].pid)) -
                  node0_before) / hz
    machine_busy = (busy_after - busy_before) / max(1, total_after - total_before) * 100
    busy_seconds = (busy_after - busy_before) / hz

    time.sleep(2)  # settled
    follower = launchers[n // 3]
    watched = {"node 0": sv.launcher_processes(launchers[0].pid), "a follower": sv.launcher_processes(follower.pid)}
    before = {k: sum(cpu_ticks(p) for p in v) for k, v in watched.items()}
    window = float(os.environ.get("AML_SCALE_IDLE_WINDOW", "10"))
    if observe:
        scrape_every_second(work, time.perf_counter() + window)
    else:
        time.sleep(window)
    idle_cpu = {k: (sum(cpu_ticks(p) for p in v) - before[k]) / hz / window * 100
                for k, v in watched.items()}
    node0_pss = sum(sv.memory_kib(p, "Pss", "smaps_rollup") for p in watched["node 0"]) / 1024

    # Fail-fast: the worker of the middle node.
    victim_rank = n // 2
    victim = None
    for pid in marked(mark.encode()):
        if comm(pid) != "sleep":
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"\0RANK={victim_rank}\0".encode() in b"\0" + f.read():
                    victim = pid
                    break
        except OSError:
            pass
    assert victim, "the middle node's worker was not found"
    # What each launcher used before the stop: its CPU for the stop is what it ends with less this.
    used_before = [sum(cpu_seconds(q) for q in with_descendants(p.pid)) for p in launchers]
    killed = time.perf_counter()
    os.kill(victim, signal.SIGKILL)
    # Each launcher's exit as it comes (not in start order): where the stop's time goes.
    index = {p.pid: i for i, p in enumerate(launchers)}
    exited_at = [0.0] * n
    stop_cpu = [0.0] * n
    while any(p.returncode is None for p in launchers):
        pid, status, usage = os.wait4(-1, 0)
        if pid in index:
            i = index[pid]
            exited_at[i] = time.perf_counter() - killed
            stop_cpu[i] = usage.ru_utime + usage.ru_stime - used_before[i]
            launchers[i].returncode = os.waitstatus_to_exitcode(status)
    statuses = [p.returncode for p in launchers]
    all_exited = time.perf_counter()
    time.sleep(0.5)
    left = marked(mark.encode())
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for log in logs:
        log.close()
    named = collections.Counter()
    for node in range(n):
        text = open(f"{work}/node.{node}.err", errors="replace").read()
        named["names the killed rank"] += f"rank {victim_rank} (local rank 0) on node {victim_rank}" in text
        named["speaks of a lost node"] += "was lost" in text
    shutil.rmtree(work, ignore_errors=True)
    return {
        "n": n,
        "start_all": last_started - start,
        "rendezvous": all_up - last_started,
        "machine_busy": machine_busy,
        "busy_seconds": busy_seconds,
        "node0_rdzv": node0_rdzv,
        "idle_node0": idle_cpu["node 0"],
        "idle_follower": idle_cpu["a follower"],
        "node0_pss": node0_pss,
        "fail_fast": all_exited - killed,
        "half_exited": sorted(exited_at)[n // 2],
        "node0_exited": exited_at[0],
        "stop_cpu": sorted(stop_cpu)[n // 2],
        "statuses": collections.Counter(statuses),
        "named": named,
        "left": len(left),
    }


if __name__ == "__main__":
    in_own_namespace()
    raise_descriptor_limit()
    args = sys.argv[1:]
    checking = args[:1] == ["--check"]
    args = args[1:] if checking else args
    builds = [("", os.path.abspath(args[0]))]
    if os.environ.get("AML_BASELINE"):
        builds = [("baseline ", os.path.abspath(os.environ["AML_BASELINE"])), ("this ", builds[0][1])]
    observing = [False]
    if os.environ.get("AML_SCALE_OBSERVE") == "compare":
        observing = [False, True]
    runs = int(os.environ.get("AML_SCALE_RUNS", "1"))
    failed = []
    print("| build | nodes | starting them all | rendezvous after the last start | the same, meeting nobody | "
          "meanwhile: cores busy, CPU used, node 0's share | idle CPU, node 0 | idle CPU, a follower | node 0 PSS | fail-fast, all exited | "
          "the same stop, meeting nobody (every worker killed) | "
          "half exited / node 0 exited | a launcher's CPU for the stop (median) | "
          "exit statuses | name the killed rank / speak of a lost node | left |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|")
    for n in map(int, args[1:]):
        for _ in range(runs):
            for label, build, observe in [(lb, b, o) for lb, b in builds for o in observing]:
                aml = f"{build}/launcher/aml-launch"
                if not observe:  # the floor, once a build
                    alone_start, alone_stop = alone(aml, n)
                r = run(aml, n, observe)
                if len(observing) > 1:
                    label = (label.strip() or "this") + (", events+metrics" if observe else ", off")
                statuses = ", ".join(f"{s}: {c}" for s, c in sorted(r["statuses"].items()))
                print(f"| {label.strip() or build} | {n} | {r['start_all']:.2f} s | {r['rendezvous']:.2f} s | {alone_start:.2f} s | "
                      f"{r['machine_busy']:.0f} %, {r['busy_seconds']:.1f} s, {r['node0_rdzv']:.2f} s | "
                      f"{r['idle_node0']:.2f} % | "
                      f"{r['idle_follower']:.3f} % | {r['node0_pss']:.1f} MiB | {r['fail_fast'] * 1000:.0f} ms | {alone_stop * 1000:.0f} ms | "
                      f"{r['half_exited'] * 1000:.0f} / {r['node0_exited'] * 1000:.0f} ms | "
                      f"{r['stop_cpu'] * 1000:.1f} ms | {statuses} | {r['named']['names the killed rank']} / {r['named']['speaks of a lost node']} | "
                      f"{r['left']} |", flush=True)
                if (r["statuses"] != collections.Counter({137: n}) or r["named"]["names the killed rank"] != n
                        or r["named"]["speaks of a lost node"] != 0 or r["left"] != 0):
                    failed.append(n)
    if checking:
        print(f"{len(args) - 1 - len(failed)} passed, {len(failed)} failed")
        sys.exit(1 if failed else 0)
