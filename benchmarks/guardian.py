"""What the guardian (issue 13: the started process stays as a guardian of a supervising child)
costs and buys, against a build from before it, side by side in the same rounds:
- launch: 8 workers of /bin/true, until the launcher exited;
- fail-fast: 8 workers, local rank 3 exits 7, the rest sleep;
- stop: INT to the launcher, 8 Python-free workers that end on INT, until it exited;
- memory: the launcher's own resident memory (VmRSS, and PSS; both processes of it, summed,
  where there are two), with 8 workers running;
- containment: kill -9 of the launcher (the pid its caller holds) with 8 workers, each with a
  TERM-ignoring child and one that called setsid: how long until none of them is left, and how
  many are left after 2 s.

usage: /usr/bin/python3 benchmarks/guardian.py BUILD_DIR BASELINE_BINARY
"""
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import supervision as sv
from side_by_side import SideBySide

NEW = sv.AML
BASE = os.path.abspath(sys.argv[2])
BINARIES = {"this build (guardian)": NEW, "before (one process)": BASE}


COMPARE = SideBySide(BINARIES, BASE, "this / before")
interleaved = COMPARE.interleaved


def table(title, unit, samples, fmt="{:.2f}"):
    COMPARE.table(f"### {title}", unit, samples, fmt)


def launch(rounds=200):
    def measure(binary):
        elapsed, status = sv.timed([binary, "--nproc-per-node", "8", "--", "/bin/true"])
        assert status == 0
        return elapsed * 1000
    table("Launch: 8 workers of /bin/true", "ms", interleaved(rounds, measure))


def fail_fast(rounds=30):
    def measure(binary):
        elapsed, status = sv.timed([binary, "--nproc-per-node", "8", "--", "sh", "-c", sv.FAIL_FAST])
        assert status == 7
        return elapsed * 1000
    table("Fail-fast: 8 workers, local rank 3 exits 7: until the launcher exited", "ms",
          interleaved(rounds, measure))


def wait_for_files(paths, timeout=10):
    deadline = time.monotonic() + timeout
    while not all(os.path.exists(p) for p in paths):
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.005)


def stop(rounds=30):
    work = tempfile.mkdtemp(prefix="aml-guardian-stop-")

    def measure(binary):
        for f in os.listdir(work):
            os.unlink(f"{work}/{f}")
        script = 'trap "exit 0" INT; touch "$0/up.$LOCAL_RANK"; while :; do sleep 0.01; done'
        proc = subprocess.Popen([binary, "--nproc-per-node", "8", "--", "sh", "-c", script, work],
                                env=sv.ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_files([f"{work}/up.{r}" for r in range(8)])
        start = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.wait()
        return (time.perf_counter() - start) * 1000
    table("Stop: INT to the launcher, 8 workers that end on INT: until the launcher exited", "ms",
          interleaved(rounds, measure))


def memory(rounds=5):
    pss = {b: [] for b in BINARIES.values()}

    def measure(binary):
        proc = subprocess.Popen([binary, "--nproc-per-node", "8", "--", "sh", "-c", "sleep 1"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # every worker runs
        own = sv.launcher_processes(proc.pid)
        total = sum(sv.memory_kib(p, "VmRSS") for p in own)
        pss[binary].append(sum(sv.memory_kib(p, "Pss", "smaps_rollup") for p in own) / 1024)
        assert proc.wait() == 0
        return total / 1024
    table("Memory: the launcher's own VmRSS with 8 workers running (both processes summed; the "
          "pages they share counted twice)", "MiB", interleaved(rounds, measure))
    table("Memory: the same as PSS (shared pages split between the processes that map them)", "MiB",
          pss)


WORKER = ('trap "" TERM; (trap "" TERM; exec sleep 300) & setsid sh -c "trap \\"\\" TERM; sleep 300" & '
          'touch "$0/up.$LOCAL_RANK"; while :; do sleep 0.05; done')


def containment(rounds=10):
    work = tempfile.mkdtemp(prefix="aml-guardian-kill-")
    left_after = {b: [] for b in BINARIES.values()}

    def measure(binary):
        for f in os.listdir(work):
            os.unlink(f"{work}/{f}")
        mark = f"aml-guardian-bench-{os.getpid()}-{time.monotonic_ns()}"
        proc = subprocess.Popen([binary, "--nproc-per-node", "8", "--", "sh", "-c", WORKER, work],
                                env=dict(sv.ENV, MARK=mark), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        wait_for_files([f"{work}/up.{r}" for r in range(8)])
        start = time.perf_counter()
        proc.kill()
        proc.wait()
        while sv.marked_pids(mark.encode()) and time.perf_counter() - start < 2:
            time.sleep(0.001)
        elapsed = (time.perf_counter() - start) * 1000
        left = sv.marked_pids(mark.encode())
        left_after[binary].append(len(left))
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return elapsed
    times = interleaved(rounds, measure)
    print("### Containment: kill -9 of the launcher, 8 workers with a TERM-ignoring and a setsid "
          "child each\n")
    print("| binary | runs | median until none left [ms] | processes left after 2 s (median) |\n"
          "|---|---:|---:|---:|")
    for name, binary in BINARIES.items():
        gone = statistics.median(times[binary])
        shown = f"{gone:.1f}" if statistics.median(left_after[binary]) == 0 else "never (> 2000)"
        print(f"| {name} | {rounds} | {shown} | {statistics.median(left_after[binary]):.0f} |")
    print()


if __name__ == "__main__":
    for binary in BINARIES.values():
        assert os.access(binary, os.X_OK), f"missing: {binary}"
    launch()
    fail_fast()
    stop()
    memory()
    containment()
