"""The rendezvous in etcd against node 0's store (DESIGN §5, "Rendezvous backends"), side by side
in one run, with a real three-member etcd (Debian's etcd-server).

hosts: 4 network-namespace hosts (tests/cluster/netns_cluster.sh) run a job of 3 nodes plus a
  hot spare (--nnodes 3:3, one worker each), etcd on 3 hosts of its own. Once every worker of
  round 0 runs, every process of one member host is SIGKILLed (the node is lost). Reported: the
  time from that kill until every worker of round 1 runs, and the part of it until a survivor
  stopped its workers (the loss noticed). Under etcd a lost launcher is noticed when its lease
  ends (TTL = --node-timeout); node 0's store notices a closed connection at once, but node 0's
  own loss ends a job there, so node 0 is lost only under etcd. Beside them, torchrun's best
  with a lost node 0: its etcd-v2 backend (python3-etcd, etcd's v2 API: --enable-v2) with
  Debian's torch (torchrun_fixed.py: its one Python 3.11 break mended), --monitor_interval 0.1
  and last_call_timeout=1; a lost node is noticed by
  its heartbeats there (5 s apart, 3 missed: fixed in torch 1.13's dynamic rendezvous).
scale N: N simulated nodes plus a spare (N + 1 real launchers, --nnodes N:N) in a network
  namespace of their own, etcd's three members on its loopback: round 0's rendezvous (from the
  last launcher's start until every worker runs) with node 0's store and with etcd, then under
  etcd node 0 lost and the time until every worker of round 1 runs. Beside it, etcd's load in
  each phase (its /metrics): its members' CPU seconds and its calls per launcher.

  With --baseline OTHER_BUILD, each trial also runs the etcd half with OTHER_BUILD's launcher
  (the three alternating), and a table compares the two builds side by side; --baseline
  gateway runs this build's launcher with --rdzv-conf transport=gateway instead (its unary
  calls through etcd's JSON gateway, against gRPC).

requests, transport: what one request of each kind the rendezvous makes costs etcd, through
  its JSON gateway and its gRPC API (benchmarks/etcd_requests.py, which says how).

usage: /usr/bin/python3 benchmarks/etcd_rendezvous.py BUILD_DIR hosts [TRIALS]
       /usr/bin/python3 benchmarks/etcd_rendezvous.py BUILD_DIR scale [--trials K]
           [--node-timeout S] [--run-for S] [--baseline OTHER_BUILD_DIR|gateway] N [N ...]
           (as root; K trials alternating the backends, medians; --run-for: seconds between
           round 0's last worker start and node 0's loss, 1 unless said)
       /usr/bin/python3 benchmarks/etcd_rendezvous.py BUILD_DIR requests|transport   (as root)
"""

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import elastic_scale as es  # noqa: E402  (its noted worker and counting)
import scale_nodes as sn  # noqa: E402  (its namespace, ports and markers)
import supervision as sv  # noqa: E402  (its launcher_processes)
import etcd_requests  # noqa: E402  (etcd on loopback, its load; requests and transport)

TESTS = os.path.join(HERE, "..", "tests", "cluster")
NODE_TIMEOUT = "2"


def kill_launcher(pid):
    for p in sorted(sv.launcher_processes(pid), reverse=True):  # supervisor, then guardian
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def ranks_of(work, round_):
    """{node rank: host} of the workers up in a round (files up.RANK.HOST.ROUND)."""
    out = {}
    for f in os.listdir(work):
        if f.startswith("up.") and f.endswith(f".{round_}"):
            rank, host, _ = f[3:].split(".")
            out[int(rank)] = int(host)
    return out


def noticed(work, hosts):
    return any("stopped its workers" in open(f"{work}/node.{h}.err", errors="replace").read()
               for h in hosts)


def lose_and_replace(work, launchers, n, victim_rank, poll):
    """SIGKILL the launcher at victim_rank; seconds until the loss is noticed and until every
    worker of round 1 runs, and whether the spare took the lost rank."""
    ranks = ranks_of(work, 0)
    spare = next(h for h in range(n + 1) if h not in ranks.values())
    victim = ranks[victim_rank]
    watched = [h for r, h in sorted(ranks.items()) if h != victim][:2]
    killed = time.perf_counter()
    kill_launcher(launchers[victim].pid)
    seen = None
    while es.count_up(work, 1) < n:
        if seen is None and noticed(work, watched):
            seen = time.perf_counter() - killed
        if time.perf_counter() - killed > 120:
            raise SystemExit("round 1 did not form within 120 s: " +
                             open(f"{work}/node.{watched[0]}.err").read()[-2000:])
        time.sleep(poll)
    replaced = time.perf_counter() - killed
    if seen is None:  # round 1 was up before a look saw the loss noticed
        seen = replaced
    return seen, replaced, ranks_of(work, 1).get(victim_rank) == spare


def kill_tree(pid):
    """SIGKILL a process and every descendant at once: a node lost with all it ran."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    todo, tree = [pid], []
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, []))
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def up_since(work, since):
    """The hosts whose worker noted itself after `since` (time.time())."""
    hosts = set()
    for f in os.listdir(work):
        if f.startswith("up."):
            try:
                if os.stat(f"{work}/{f}").st_mtime >= since:
                    hosts.add(f.split(".")[2])
            except OSError:
                pass
    return hosts


def start_etcd(net, work, hosts):
    # --enable-v2: torchrun's etcd-v2 backend, measured beside aml-launch on the same members.
    # The members' data on disk, as a real cluster keeps it (the tests' is on tmpfs).
    subprocess.run(["bash", f"{TESTS}/etcd_cluster.sh", "up", net, work] + list(map(str, hosts)),
                   check=True, env=dict(os.environ, ETCD_FLAGS="--enable-v2",
                                        ETCD_DATA_ROOT=work))
    return subprocess.run(["bash", f"{TESTS}/etcd_cluster.sh", "endpoints"] +
                          list(map(str, hosts)), check=True, capture_output=True,
                          text=True).stdout.strip()


def stop_all(launchers, mark):
    for p in launchers:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in launchers:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    for pid in sn.marked(f"AML_SCALE_MARK={mark}".encode()):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# --- hosts: 4 launcher hosts and 3 etcd hosts.
def hosts_trial(aml, worker, net, endpoints, backend, victim_rank, trial):
    work = tempfile.mkdtemp(prefix="aml-etcd-hosts-")
    mark = f"{os.getpid()}-{backend}-{trial}"
    job = f"hosts-{mark}"
    if backend == "etcd":
        rdzv = ["--rdzv-backend", "etcd", "--rdzv-endpoint", endpoints]
    else:
        rdzv = ["--rdzv-endpoint", f"{os.popen(f'bash {TESTS}/netns_cluster.sh addr 3').read().strip()}:29400"]
    launchers = []
    for i, host in enumerate(range(3, 7)):
        launchers.append(subprocess.Popen(
            ["bash", f"{TESTS}/netns_cluster.sh", "exec", net, str(host), "env", "-i",
             "PATH=/usr/bin:/bin", f"W={work}", f"HOST={i}", f"AML_SCALE_MARK={mark}", aml,
             "--nnodes", "3:3", "--nproc-per-node", "1", "--rdzv-id", job, "--rdzv-last-call", "1",
             "--node-timeout", NODE_TIMEOUT, "--max-restarts", "1"] + rdzv + ["--", worker],
            stdout=subprocess.DEVNULL, stderr=open(f"{work}/node.{i}.err", "wb")))
        time.sleep(0.3)
    while es.count_up(work, 0) < 3:
        time.sleep(0.02)
    time.sleep(1)
    result = lose_and_replace(work, launchers, 3, victim_rank, 0.01)
    stop_all(launchers, mark)
    shutil.rmtree(work, ignore_errors=True)
    return result


def torchrun_trial(worker, net, endpoints, trial):
    """torchrun --rdzv-backend etcd-v2: 3 nodes + a spare; node 0's host lost (its agent and
    workers SIGKILLed at once). Seconds until the three nodes left run workers again."""
    work = tempfile.mkdtemp(prefix="aml-etcd-torchrun-")
    mark = f"{os.getpid()}-torchrun-{trial}"
    agents = []
    for i, host in enumerate(range(3, 7)):
        agents.append(subprocess.Popen(
            ["bash", f"{TESTS}/netns_cluster.sh", "exec", net, str(host), "env", "-i",
             "PATH=/usr/bin:/bin", f"W={work}", f"HOST={i}", f"AML_SCALE_MARK={mark}",
             "/usr/bin/python3", os.path.join(HERE, "torchrun_fixed.py"), "--nnodes", "3:3",
             "--nproc_per_node", "1", "--rdzv_backend", "etcd-v2",
             "--rdzv_endpoint", endpoints.split(",")[0], "--rdzv_id", f"torchrun-{mark}",
             "--rdzv_conf", "last_call_timeout=1", "--max_restarts", "1",
             "--monitor_interval", "0.1", "--no_python", "sh", "-c",
             f"AML_LAUNCH_RESTART_COUNT=$TORCHELASTIC_RESTART_COUNT exec {worker}"],
            stdout=subprocess.DEVNULL, stderr=open(f"{work}/node.{i}.err", "wb")))
        time.sleep(0.3)
    started = time.perf_counter()
    while es.count_up(work, 0) < 3:
        if time.perf_counter() - started > 120:
            raise SystemExit("torchrun's round 0 did not form: " +
                             open(f"{work}/node.0.err").read()[-2000:])
        time.sleep(0.02)
    time.sleep(1)
    ranks = ranks_of(work, 0)
    victim = ranks[0]
    killed_wall, killed = time.time(), time.perf_counter()
    kill_tree(agents[victim].pid)
    replaced = None  # the next round did not form within 90 s
    while time.perf_counter() - killed < 90:
        if len(up_since(work, killed_wall) - {str(victim)}) >= 3:
            replaced = time.perf_counter() - killed
            break
        time.sleep(0.01)
    for agent in agents:
        kill_tree(agent.pid)
    for pid in sn.marked(f"AML_SCALE_MARK={mark}".encode()):
        kill_tree(pid)
    shutil.rmtree(work, ignore_errors=True)
    return None, replaced, None


def hosts(aml, trials):
    net = f"eb{os.getpid()}"
    etcd_work = tempfile.mkdtemp(prefix="aml-etcd-members-")
    subprocess.run(["bash", f"{TESTS}/netns_cluster.sh", "up", net, "7"], check=True)
    worker = [es.noted_sleep(etcd_work)][0]
    try:
        endpoints = start_etcd(net, etcd_work, [0, 1, 2])
        cases = [("etcd", 0), ("etcd", 2), ("c10d", 2), ("torchrun etcd-v2", 0)]
        results = {case: [] for case in cases}
        for trial in range(trials):  # interleaved: the machine's noise falls on each alike
            for case in cases:
                if case[0].startswith("torchrun"):
                    results[case].append(torchrun_trial(worker, net, endpoints, trial))
                else:
                    results[case].append(hosts_trial(aml, worker, net, endpoints, *case, trial))
        print(f"4 namespace hosts (3 nodes + 1 spare), etcd on 3 more; --node-timeout "
              f"{NODE_TIMEOUT} s; median of {trials} trials (each trial's figures in brackets)")
        print("| backend | node lost | noticed (a survivor stopped its workers) | every worker "
              "of round 1 running | the spare took the lost rank |")
        print("|---|---|---:|---:|---|")
        for (backend, rank), runs in results.items():
            if runs[0][0] is None:  # torchrun: neither noticed nor ranks are aml-launch's to read
                formed = [r[1] for r in runs if r[1] is not None]
                each = ", ".join("none in 90 s" if r[1] is None else f"{r[1]:.2f}" for r in runs)
                done = f"{statistics.median(formed):.2f} s" if formed else "-"
                print(f"| {backend} | node {rank} | - | {done} ({each}; {len(formed)} of "
                      f"{len(runs)} formed) | - |")
                continue
            done = statistics.median(r[1] for r in runs)
            each = ", ".join(f"{r[1]:.2f}" for r in runs)
            seen = statistics.median(r[0] for r in runs)
            took = sum(r[2] for r in runs)
            print(f"| {backend} | node {rank} | {seen:.2f} s | {done:.2f} s ({each}) | "
                  f"{took} of {len(runs)} |")
    finally:
        subprocess.run(["bash", f"{TESTS}/etcd_cluster.sh", "down", etcd_work])
        subprocess.run(["bash", f"{TESTS}/netns_cluster.sh", "down", net, "7"])
        shutil.rmtree(etcd_work, ignore_errors=True)


# --- scale: N simulated nodes in one namespace, etcd on its loopback.
ETCD_CALLS = ("Put", "Txn", "Range", "Watch", "LeaseKeepAlive")


def load_since(before, members, endpoints, n):
    """etcd's CPU seconds and its calls per launcher since `before`."""
    cpu, calls = etcd_requests.etcd_load(members, endpoints)
    return cpu - before[0], {c: (calls[c] - before[1][c]) / (n + 1) for c in ETCD_CALLS}


def scale_trial(aml, n, backend, endpoints, lose_node0, node_timeout, members, conf=None,
                run_for=1.0):
    """run_for: seconds the job runs between round 0's last worker start and node 0's loss."""
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    work = tempfile.mkdtemp(prefix=f"aml-etcd-scale-{n}-", dir=shm)
    # A job id of its own each trial: a job id used again right after its last run ended
    # starts a new generation of keys, and launchers starting while the last run's are still
    # writing its end may split between two (README: what is still weak).
    mark = f"{os.getpid()}-{backend}-{n}-{time.monotonic_ns()}"
    worker = es.noted_sleep(work)
    port = sn.free_port()
    rdzv = (["--rdzv-backend", "etcd", "--rdzv-endpoint", endpoints] if backend == "etcd"
            else ["--rdzv-endpoint", f"127.0.0.1:{port}"])
    if conf and backend == "etcd":
        rdzv += ["--rdzv-conf", conf]
    launchers, load = [], []
    before = etcd_requests.etcd_load(members, endpoints)
    for node in range(n + 1):
        launchers.append(subprocess.Popen(
            [aml, "--nnodes", f"{n}:{n}", "--nproc-per-node", "1", "--rdzv-id", f"s-{mark}",
             "--rdzv-last-call", "1", "--rdzv-timeout", "600", "--node-timeout", node_timeout,
             "--max-restarts", "1"] + rdzv + ["--", worker],
            env={"PATH": "/usr/bin:/bin", "W": work, "HOST": str(node), "AML_SCALE_MARK": mark},
            stdout=subprocess.DEVNULL, stderr=open(f"{work}/node.{node}.err", "wb")))
        if node == 0 and backend != "etcd":
            time.sleep(0.2)  # node 0 serves the store
    last_started = time.perf_counter()
    while es.count_up(work, 0) < n:
        if time.perf_counter() - last_started > 300:
            raise SystemExit(f"round 0 of {n} did not form: " +
                             open(f"{work}/node.0.err").read()[-2000:])
        time.sleep(0.05)
    rendezvous = time.perf_counter() - last_started
    load.append(load_since(before, members, endpoints, n))
    replaced = None
    if lose_node0:
        time.sleep(run_for)
        before = etcd_requests.etcd_load(members, endpoints)
        replaced = lose_and_replace(work, launchers, n, 0, 0.05)
        load.append(load_since(before, members, endpoints, n))
    stop_all(launchers, mark)
    shutil.rmtree(work, ignore_errors=True)
    return rendezvous, replaced, load


def scale(aml, sizes, trials, node_timeout, baseline=None, run_for=1.0):
    # On tmpfs: the members share this machine with N launchers; a cluster gives etcd disks of
    # its own.
    with etcd_requests.etcd_alone(__file__, "loopback") as (procs, endpoints):
        print(f"N simulated nodes + 1 spare on one machine (one namespace, loopback), etcd's three "
              f"members on the same two cores; --node-timeout {node_timeout} s (etcd: the lease's "
              f"TTL); node 0 lost {run_for:g} s after round 0's last worker started; medians of "
              f"{trials} trials, the backends alternating (each trial's figures in brackets)")
        print("| nodes | rendezvous, node 0's store | rendezvous, etcd | ratio | etcd: node 0 "
              "lost → noticed | → every worker of round 1 running |")
        print("|---:|---:|---:|---:|---:|---:|")
        loads = {n: [] for n in sizes}
        versus = {n: [] for n in sizes}  # (baseline, this build) per trial
        for n in sizes:
            stores, etcds, seen, done = [], [], [], []
            for _ in range(trials):
                store, _, _ = scale_trial(aml, n, "c10d", endpoints, False, node_timeout, procs)
                if baseline:
                    versus[n].append(scale_trial(baseline[0], n, "etcd", endpoints, True,
                                                 node_timeout, procs, baseline[1], run_for))
                etcd, lost, load = scale_trial(aml, n, "etcd", endpoints, True, node_timeout,
                                               procs, run_for=run_for)
                loads[n].append(load)
                if baseline:
                    versus[n][-1] = (versus[n][-1], (etcd, lost, load))
                stores.append(store)
                etcds.append(etcd)
                seen.append(lost[0])
                done.append(lost[1])
            med = statistics.median
            each = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
            print(f"| {n} | {med(stores):.2f} s ({each(stores)}) | {med(etcds):.2f} s "
                  f"({each(etcds)}) | {med(etcds) / med(stores):.2f}x | {med(seen):.2f} s "
                  f"({each(seen)}) | {med(done):.2f} s ({each(done)}) |", flush=True)
        # What etcd did for it: where its time goes (the members share the launchers' cores).
        print("\netcd's load, medians: CPU seconds of its three members, and calls per launcher")
        print("| nodes | phase | etcd CPU | " + " | ".join(ETCD_CALLS) + " |")
        print("|---:|---|---:|" + "---:|" * len(ETCD_CALLS))
        for n in sizes:
            for i, phase in enumerate(("round 0's rendezvous (from the first start)",
                                       "node 0 lost → round 1 running")):
                cpu = statistics.median(trial[i][0] for trial in loads[n])
                calls = [statistics.median(trial[i][1][c] for trial in loads[n])
                         for c in ETCD_CALLS]
                print(f"| {n} | {phase} | {cpu:.1f} s | " +
                      " | ".join(f"{c:.1f}" for c in calls) + " |")
        if baseline:
            compare_builds(sizes, versus)


def compare_builds(sizes, versus):
    """The etcd half of each trial with the baseline's launcher and with this build's."""
    med = statistics.median
    print("\nunder etcd, the baseline build against this one (the same trials; medians, and "
          "this build's over the baseline's)")
    print("| nodes | what | baseline | this build | ratio |")
    print("|---:|---|---:|---:|---:|")
    rows = (("rendezvous", lambda t: t[0]),
            ("node 0 lost → every worker of round 1 running", lambda t: t[1][1]),
            ("etcd CPU, round 0", lambda t: t[2][0][0]),
            ("etcd CPU, node 0 lost → round 1", lambda t: t[2][1][0]))
    for n in sizes:
        for name, pick in rows:
            base = med(pick(pair[0]) for pair in versus[n])
            this = med(pick(pair[1]) for pair in versus[n])
            print(f"| {n} | {name} | {base:.2f} s | {this:.2f} s | {this / base:.2f}x |")


if __name__ == "__main__":
    aml = f"{os.path.abspath(sys.argv[1])}/launcher/aml-launch"
    if sys.argv[2] == "hosts":
        hosts(aml, int(sys.argv[3]) if len(sys.argv) > 3 else 3)
    elif sys.argv[2] == "requests":
        etcd_requests.requests(__file__)
    elif sys.argv[2] == "transport":
        etcd_requests.transport(__file__)
    else:
        args, trials, node_timeout, baseline, run_for = sys.argv[3:], 1, "10", None, 1.0
        while args and args[0].startswith("--"):
            if args[0] == "--trials":
                trials = int(args[1])
            elif args[0] == "--node-timeout":
                node_timeout = args[1]
            elif args[0] == "--run-for":
                run_for = float(args[1])
            elif args[0] == "--baseline" and args[1] == "gateway":
                baseline = (aml, "transport=gateway")  # this build through the JSON gateway
            elif args[0] == "--baseline":
                baseline = (f"{os.path.abspath(args[1])}/launcher/aml-launch", None)
            else:
                raise SystemExit(f"unknown option {args[0]}")
            args = args[2:]
        scale(aml, [int(n) for n in args], trials, node_timeout, baseline, run_for)
