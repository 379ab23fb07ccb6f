"""What admitting only the job costs (DESIGN §5): N real aml-launch processes on this machine, one
per simulated node (one worker each), node 0's store on 127.0.0.1, in a network namespace of
their own (as scale_nodes.py). Side by side in one run, alternating, medians of RUNS:

- the rendezvous (from the last launcher's start until every worker ran) with a job secret
  (AML_LAUNCH_SECRET_FILE on every node) against without;
- with munge credentials (a private munged, AML_MUNGE_SOCKET, SLURM_JOB_ID set), at the sizes
  given with --munge;
- with a secret while a stranger keeps 2,000 idle and 200 junk connections coming at node 0's
  store (tests/blackbox/store_stranger.py flood), against the same quiet;
- node 0's launcher memory (VmRSS of its processes) while 10,000 connections that never speak
  arrive at its store, and how many of them it held at most.

usage: /usr/bin/python3 benchmarks/store_auth.py BUILD_DIR N [N ...] [--munge N ...]   (as root;
AML_AUTH_RUNS runs each, default 3)
"""
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUNS = int(os.environ.get("AML_AUTH_RUNS", "3"))
sys.path.insert(0, HERE)
import scale_nodes as sn  # noqa: E402  (its namespace and ports)
import supervision as sv  # noqa: E402  (its launcher_processes)

STRANGER = os.path.join(ROOT, "tests", "blackbox", "store_stranger.py")


def rendezvous(aml, n, env_extra):
    """Seconds from the last launcher's start until all N workers ran."""
    work = tempfile.mkdtemp(prefix=f"aml-auth-{n}-")
    port = sn.free_port()
    env = {"PATH": "/usr/bin:/bin", "W": work, **env_extra}
    worker = 'touch "$W/up.$RANK"; exec sleep 600'
    launchers = []
    for node in range(n):
        launchers.append(subprocess.Popen(
            [aml, "--nnodes", str(n), "--node-rank", str(node), "--nproc-per-node", "1",
             "--master-addr", "127.0.0.1", "--master-port", str(port), "--rdzv-timeout", "600",
             "--", "sh", "-c", worker], env=env, stdout=subprocess.DEVNULL,
            stderr=open(f"{work}/node.{node}.err", "wb")))
    last_started = time.perf_counter()
    while sum(1 for f in os.listdir(work) if f.startswith("up.")) < n:
        if launchers[0].poll() is not None:
            raise SystemExit(f"node 0 exited early: {open(f'{work}/node.0.err').read()[-2000:]}")
        time.sleep(0.02)
    took = time.perf_counter() - last_started
    warned = "anyone who reaches the store" in open(f"{work}/node.0.err", errors="replace").read()
    if warned != (not env_extra.keys() - {"W"}):
        raise SystemExit(f"node 0 ran {'without' if warned else 'with'} authentication, not as asked")
    for p in launchers:
        p.send_signal(signal.SIGTERM)
    for p in launchers:
        p.wait()
    shutil.rmtree(work, ignore_errors=True)
    return took, port


def start_munged(folder):
    key = os.path.join(folder, "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o400)
    sock = os.path.join(folder, "munge.sock")
    subprocess.run(["munged", "-f", f"--socket={sock}", f"--key-file={key}",
                    f"--log-file={folder}/munged.log", f"--pid-file={folder}/munged.pid",
                    f"--seed-file={folder}/munged.seed", "--num-threads=4"], check=True)
    return sock


def flood(port, idle=2000, junk=200):
    env = dict(os.environ, AML_FLOOD_IDLE=str(idle), AML_FLOOD_JUNK=str(junk), AML_FLOOD_HOLD="6")
    return subprocess.Popen(["/usr/bin/python3", STRANGER, "flood", "127.0.0.1", str(port), "x"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)


def rss_kib(pids):
    return sum(sv.memory_kib(p, "VmRSS", "status") for p in pids)


def idle_connections(aml, count):
    """Node 0 of a 2-node job waiting for node 1, while COUNT connections arrive and never speak."""
    port = sn.free_port()
    node0 = subprocess.Popen([aml, "--nnodes", "2", "--node-rank", "0", "--master-addr", "127.0.0.1",
                              "--master-port", str(port), "--rdzv-timeout", "120",
                              "--rdzv-secret-file", SECRET, "--", "true"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.02)
    time.sleep(0.5)
    pids = sv.launcher_processes(node0.pid)
    before = rss_kib(pids)
    held, peak, start = [], before, time.perf_counter()
    for i in range(count):
        # Each from an address of its own in 127/8, as real strangers have theirs.
        s = socket.socket()
        s.bind((f"127.{1 + i // 60000}.{(i // 250) % 240}.{1 + i % 250}", 0))
        s.connect(("127.0.0.1", port))
        held.append(s)
        if i % 500 == 0:
            peak = max(peak, rss_kib(pids))
    opened = time.perf_counter() - start
    time.sleep(0.3)
    peak = max(peak, rss_kib(pids))
    open_now = 0
    for s in held:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                continue
        except BlockingIOError:
            open_now += 1
        except OSError:
            continue
    for s in held:
        s.close()
    node0.send_signal(signal.SIGTERM)
    node0.wait()
    return before, peak, opened, open_now


if __name__ == "__main__":
    sn.in_own_namespace(os.path.abspath(__file__))
    resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
    args = sys.argv[1:]
    build = os.path.abspath(args[0])
    sizes = [int(a) for a in args[1:args.index("--munge")]] if "--munge" in args else [int(a) for a in args[1:]]
    munge_sizes = [int(a) for a in args[args.index("--munge") + 1:]] if "--munge" in args else []
    aml = f"{build}/launcher/aml-launch"
    folder = tempfile.mkdtemp(prefix="aml-auth-bench-")
    SECRET = os.path.join(folder, "secret")
    with open(SECRET, "wb") as f:
        f.write(os.urandom(32).hex().encode())
    with_secret = {"AML_LAUNCH_SECRET_FILE": SECRET}

    print("| nodes | without a secret | with a secret | ratio |")
    print("|---:|---:|---:|---:|")
    for n in sizes:
        plain, secret = [], []
        for _ in range(RUNS):
            plain.append(rendezvous(aml, n, {})[0])
            secret.append(rendezvous(aml, n, with_secret)[0])
        a, b = statistics.median(plain), statistics.median(secret)
        print(f"| {n:,} | {a:.2f} s | {b:.2f} s | {b / a:.2f}x |", flush=True)

    if munge_sizes:
        sock = start_munged(folder)
        with_munge = {"AML_MUNGE_SOCKET": sock, "SLURM_JOB_ID": "4242"}
        print("\n| nodes | without | munge | ratio |")
        print("|---:|---:|---:|---:|")
        for n in munge_sizes:
            plain, munged = [], []
            for _ in range(RUNS):
                plain.append(rendezvous(aml, n, {})[0])
                munged.append(rendezvous(aml, n, with_munge)[0])
            a, b = statistics.median(plain), statistics.median(munged)
            print(f"| {n:,} | {a:.2f} s | {b:.2f} s | {b / a:.2f}x |", flush=True)
        with open(f"{folder}/munged.pid") as f:
            os.kill(int(f.read()), signal.SIGTERM)

    print("\n| nodes, with a secret | quiet | 2,000 idle + 200 junk connections arriving | ratio |")
    print("|---:|---:|---:|---:|")
    for n in sizes[:1]:
        quiet, attacked = [], []
        for _ in range(RUNS):
            quiet.append(rendezvous(aml, n, with_secret)[0])
            # The flood aims at the port the next run takes: start it, then the job.
            port = sn.free_port()
            stranger = flood(port)
            original = sn.free_port
            sn.free_port = lambda: port
            try:
                time.sleep(0.5)
                attacked.append(rendezvous(aml, n, with_secret)[0])
            finally:
                sn.free_port = original
                stranger.stdin.close()
                stranger.wait()
        a, b = statistics.median(quiet), statistics.median(attacked)
        print(f"| {n:,} | {a:.2f} s | {b:.2f} s | {b / a:.2f}x |", flush=True)

    before, peak, opened, held = idle_connections(aml, 10000)
    print(f"\nnode 0 with 10,000 connections that never speak arriving in {opened:.1f} s: VmRSS "
          f"{before / 1024:.1f} MiB before, {peak / 1024:.1f} MiB at most; {held:,} still open at the end "
          f"(the cap on unproven connections is 8,192: the oldest go first)")
    shutil.rmtree(folder, ignore_errors=True)
