"""An elastic job at scale on one machine: N simulated nodes plus one hot spare (N + 1 real
aml-launch processes, --nnodes N:N, one worker each), the store on 127.0.0.1, all in a network
namespace of their own (as scale_nodes.py). Once every worker of round 0 runs, one member's
launcher is SIGKILLed (both of its processes: a node lost); reported is the time from that kill
until every worker of round 1 runs, and whether the spare took the lost node's rank.

One machine runs everything: the N survivors' teardown and their N new workers share its two
cores (on a cluster each node restarts only its own).

usage: /usr/bin/python3 benchmarks/elastic_scale.py BUILD_DIR N [N ...]   (as root; the median of
AML_ELASTIC_RUNS runs each, default 3)
"""
import atexit
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = int(os.environ.get("AML_ELASTIC_RUNS", "3"))
sys.path.insert(0, HERE)
import scale_nodes as sn  # noqa: E402  (its namespace, ports and markers)
import supervision as sv  # noqa: E402  (its launcher_processes)


def count_up(work, round_):
    suffix = f".{round_}"
    return sum(1 for f in os.listdir(work) if f.startswith("up.") and f.endswith(suffix))


# The worker: one small program that notes its rank and round in a file's name and sleeps. A
# shell and a sleep were two programs to start per worker; 4,096 of them cost this two-core
# machine about a second of the time measured, which a cluster spends on every node at once.
WORKER_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/up.%s.%s.%s", getenv("W"), getenv("GROUP_RANK"),
           getenv("HOST"), getenv("AML_LAUNCH_RESTART_COUNT"));
  int fd = open(path, O_CREAT | O_WRONLY, 0644);
  if (fd < 0) return 1;
  close(fd);
  sleep(600);
  return 0;
}
"""


def noted_sleep(work):
    # Built on disk beside the work directory (/dev/shm may be mounted noexec).
    build = tempfile.mkdtemp(prefix="aml-elastic-worker-")
    atexit.register(shutil.rmtree, build, True)  # the benchmark leaves /tmp as it found it
    source, program = f"{build}/noted_sleep.c", f"{build}/noted_sleep"
    with open(source, "w") as f:
        f.write(WORKER_C)
    subprocess.run(["cc", "-O2", "-o", program, source], check=True)
    return program


def run(aml, n):
    # tmpfs: thousands of workers creating their marker files in one directory of a disk
    # file system (ext4's inode allocation, the directory's lock) took a third of the machine.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    work = tempfile.mkdtemp(prefix=f"aml-elastic-{n}-", dir=shm)
    mark = f"{os.getpid()}-{n}"
    port = sn.free_port()
    env = {"PATH": "/usr/bin:/bin", "W": work, "AML_SCALE_MARK": mark}
    worker = [noted_sleep(work)]
    launchers = []
    for node in range(n + 1):  # the last one is the spare
        launchers.append(subprocess.Popen(
            [aml, "--nnodes", f"{n}:{n}", "--nproc-per-node", "1", "--rdzv-endpoint",
             f"127.0.0.1:{port}", "--rdzv-id", f"scale-{mark}", "--rdzv-last-call", "1",
             "--rdzv-timeout", "600", "--max-restarts", "1", "--"] + worker,
            env=dict(env, HOST=str(node)), stdout=subprocess.DEVNULL,
            stderr=open(f"{work}/node.{node}.err", "wb")))
        if node == 0:
            time.sleep(0.2)  # node 0 serves the store (the first to take the port)
    while count_up(work, 0) < n:
        if launchers[0].poll() is not None:
            raise SystemExit(f"node 0 exited early: {open(f'{work}/node.0.err').read()}")
        time.sleep(0.05)
    time.sleep(1)
    # The member in the middle (by node rank) is lost with its worker.
    ranks = {}
    for f in os.listdir(work):
        if f.startswith("up.") and f.endswith(".0"):
            rank, host, _ = f[3:].split(".")
            ranks[int(rank)] = int(host)
    spare = next(h for h in range(n + 1) if h not in ranks.values())
    victim_rank = n // 2
    victim = launchers[ranks[victim_rank]]
    processes = sv.launcher_processes(victim.pid)
    killed = time.perf_counter()
    for pid in sorted(processes, reverse=True):  # the supervisor before its guardian
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    agreed = None  # when node 0 said round 1's members (the rendezvous is done)
    # Listing thousands of files is this script's CPU taken from what it measures: at scale
    # it looks every 50 ms (the figures are seconds there).
    poll = 0.01 if n <= 256 else 0.05
    while count_up(work, 1) < n:
        if launchers[0].poll() is not None:
            raise SystemExit(f"node 0 exited: {open(f'{work}/node.0.err').read()[-2000:]}")
        if agreed is None and "elastic round 1" in open(f"{work}/node.0.err").read():
            agreed = time.perf_counter() - killed
        time.sleep(poll)
    replaced = time.perf_counter() - killed
    spare_rank = next((f[3:].split(".")[0] for f in os.listdir(work)
                       if f.startswith("up.") and f.endswith(f".{spare}.1")), None)
    for p in launchers:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in launchers:
        p.wait()
    left = sn.marked(f"AML_SCALE_MARK={mark}".encode())
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(os.path.dirname(worker[0]), ignore_errors=True)
    return replaced, agreed, spare_rank == str(victim_rank), victim_rank, len(left)


if __name__ == "__main__":
    sn.in_own_namespace(__file__)
    build = os.path.abspath(sys.argv[1])
    aml = f"{build}/launcher/aml-launch"
    print(f"Median of {RUNS} runs each.")
    print("| nodes (+1 spare) | node lost → every worker of the next round running | "
          "of which: until node 0 had the round's members | the spare took the lost node's rank "
          "| left |")
    print("|---:|---:|---:|---|---:|")
    for n in map(int, sys.argv[2:]):
        results = [run(aml, n) for _ in range(RUNS)]
        replaced = statistics.median(r[0] for r in results)
        agreed = statistics.median(r[1] if r[1] is not None else float("nan") for r in results)
        took = sum(r[2] for r in results)
        left = sum(r[4] for r in results)
        each = ", ".join(f"{r[0]:.2f}" for r in results)
        print(f"| {n} | {replaced:.2f} s ({each}) | {agreed:.2f} s | {took} of {RUNS} "
              f"(rank {results[0][3]}) | {left} |", flush=True)
