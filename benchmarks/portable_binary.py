"""The portable release binary (dist/aml-launch: Zig's clang and libc++, glibc 2.17 symbols)
against the gcc build of the same tree (libstdc++, glibc 2.36), side by side in the same
rounds: launch, fail-fast, relay and the launcher's own memory, as benchmarks/supervision.py
measures them. The bar: every figure within 5 % (issue 23; 10 % in issue 12).

usage: /usr/bin/python3 benchmarks/portable_binary.py BUILD_DIR PORTABLE_BINARY
RELAY_RUNS=N: rounds of the relay (5).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import supervision as sv
from side_by_side import SideBySide

GCC = sv.AML
PORTABLE = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "dist/aml-launch")
BINARIES = {"gcc build (build/launcher/aml-launch)": GCC, "portable (dist/aml-launch)": PORTABLE}


COMPARE = SideBySide(BINARIES, GCC, "portable / gcc")
interleaved = COMPARE.interleaved


def table(title, unit, samples, fmt="{:.1f}"):
    COMPARE.table(title, unit, samples, fmt)


def launch(rounds=200):
    def measure(binary):
        elapsed, status = sv.timed([binary, "--nproc-per-node", "8", "--", "/bin/true"])
        assert status == 0
        return elapsed * 1000
    table("### Launch: 8 workers of /bin/true", "ms", interleaved(rounds, measure), "{:.2f}")


def fail_fast(rounds=30):
    def measure(binary):
        elapsed, status = sv.timed([binary, "--nproc-per-node", "8", "--", "sh", "-c", sv.FAIL_FAST])
        assert status == 7
        return elapsed * 1000
    table("### Fail-fast: 8 workers, local rank 3 exits 7, the rest sleep: until the launcher exited",
          "ms", interleaved(rounds, measure), "{:.2f}")


LINES_PER_WORKER = (1 << 30) // 100 // 8


def relay_run(binary, logs, on_start=None):
    """8 workers x 1/8 GiB through `binary` with log files; every byte checked afterwards."""
    shutil.rmtree(logs, ignore_errors=True)
    os.sync()
    proc = subprocess.Popen([binary, "--nproc-per-node", "8", "--log-dir", logs, "--", sv.FLOOD,
                             str(LINES_PER_WORKER)], stdout=subprocess.DEVNULL, env=sv.ENV)
    figure = on_start(proc) if on_start else None
    assert proc.wait() == 0
    sizes = [os.path.getsize(f"{logs}/std_log_process_{r}.txt") for r in range(8)]
    assert sizes == [LINES_PER_WORKER * 100] * 8, sizes
    return figure


def launcher_cpu_seconds(proc):
    """The launcher's own utime + stime: its guardian's and its supervising child's (which
    relays), read from /proc/PID/stat until they exit (wait4's rusage would add its reaped
    workers' times)."""
    ticks = {}
    while proc.poll() is None:
        for pid in sv.launcher_processes(proc.pid):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                ticks[pid] = int(fields[11]) + int(fields[12])
            except (OSError, IndexError):
                pass
        time.sleep(0.01)
    return sum(ticks.values()) / os.sysconf("SC_CLK_TCK")


def relay(rounds=int(os.environ.get("RELAY_RUNS", "5"))):
    work = tempfile.mkdtemp(prefix="aml-portable-relay-")
    try:
        def wall(binary):
            start = time.perf_counter()
            relay_run(binary, f"{work}/logs")
            return time.perf_counter() - start
        walls = interleaved(rounds, wall)
        # Apart from the timed rounds: polling /proc would take CPU from them.
        cpu = interleaved(3, lambda binary: relay_run(binary, f"{work}/logs", launcher_cpu_seconds))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table(f"### Relay: 8 workers x {LINES_PER_WORKER:,} lines of 100 bytes (1 GiB), tagged console to "
          "/dev/null + log files", "s", walls, "{:.3f}")
    table("### Relay: the launcher's own CPU time for the 1 GiB (utime + stime)", "s", cpu, "{:.3f}")


def memory(rounds=5):
    def measure(binary):
        proc = subprocess.Popen([binary, "--nproc-per-node", "8", "--", "sh", "-c", "sleep 1"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, sv.peak_rss_kib(proc.pid))
            time.sleep(0.02)
        assert proc.returncode == 0
        return peak / 1024
    table("### Memory: the launcher's own peak RSS (VmHWM) with 8 workers running", "MiB",
          interleaved(rounds, measure), "{:.2f}")


if __name__ == "__main__":
    for binary in BINARIES.values():
        assert os.access(binary, os.X_OK), f"missing: {binary}"
    print(f"gcc build: {subprocess.run([GCC, '--version'], capture_output=True, text=True).stdout.splitlines()[0]}; "
          f"portable: {subprocess.run([PORTABLE, '--version'], capture_output=True, text=True).stdout.splitlines()[0]}\n")
    launch()
    fail_fast()
    relay()
    memory()
