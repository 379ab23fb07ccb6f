"""Whole-process benchmarks of supervision, side by side in one run (medians):
  1. launch: 8 workers of /bin/true — aml-launch vs mpirun vs torchrun vs a bare
     posix_spawn-and-wait program (the floor);
  2. fail-fast: 8 workers, one exits 7 at once, the rest sleep — time until the launcher has
     exited and every worker is gone, its exit status, and the processes left behind;
  3. relay: 8 workers writing 1 GiB of 100-byte lines in all, through aml-launch (tagged, with
     per-rank log files) vs the same workers writing straight to files;
  3b. relay1: one worker writing 1 GiB to its console, a file, without a log file (a
     per-process launch's usual case), through aml-launch vs straight to the file;
  4. memory: the launcher's own peak RSS (VmHWM; aml-launch's guardian and supervisor summed) while it supervises 8 workers.

usage: /usr/bin/python3 benchmarks/supervision.py [BUILD_DIR [launch|failfast|relay|relay1|memory ...]]
(needs python3-torch and Open MPI; all of them by default)
RELAY_RUNS=N: rounds of the relay benchmarks (5); AML_BASELINE=PATH (or RELAY_BASELINE): another
aml-launch binary (an earlier build) whose rows run in the same rounds of every benchmark, for a
side-by-side comparison.
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
import uuid

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
HERE = os.path.dirname(os.path.abspath(__file__))
AML = f"{BUILD}/launcher/aml-launch"
FLOOR = f"{BUILD}/benchmarks/spawn_floor"
FLOOD = f"{BUILD}/benchmarks/line_flood"
TORCHRUN = ["/usr/bin/python3", f"{HERE}/torchrun_wrapper.py", "--standalone", "--nproc_per_node", "8",
            "--monitor_interval", "0.1", "--no_python"]
MPIRUN = ["mpirun", "--oversubscribe", "-np", "8"]
BASELINE = os.environ.get("AML_BASELINE") or os.environ.get("RELAY_BASELINE")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")


def timed(cmd, env=ENV, stdout=subprocess.DEVNULL):
    start = time.perf_counter()
    status = subprocess.run(cmd, env=env, stdout=stdout, stderr=subprocess.DEVNULL).returncode
    return time.perf_counter() - start, status


def median_ms(samples):
    return statistics.median(samples) * 1000


def marked_pids(mark):
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark in f.read():
                    pids.append(int(pid))
        except OSError:
            pass
    return pids


def launch_benchmark(rounds=100, torchrun_every=10):
    tools = {
        "bare posix_spawn + wait (floor)": [FLOOR, "8", "/bin/true"],
        "aml-launch --nproc-per-node 8": [AML, "--nproc-per-node", "8", "--", "/bin/true"],
        **({"AML_BASELINE (an earlier build) --nproc-per-node 8":
            [BASELINE, "--nproc-per-node", "8", "--", "/bin/true"]} if BASELINE else {}),
        "mpirun --oversubscribe -np 8": MPIRUN + ["/bin/true"],
        "torchrun --nproc_per_node 8 --monitor_interval 0.1": TORCHRUN + ["/bin/true"],
    }
    samples = {name: [] for name in tools}
    for r in range(rounds):
        for name, cmd in tools.items():
            if name.startswith("torchrun") and r % torchrun_every:
                continue
            elapsed, status = timed(cmd)
            assert status == 0, (name, status)
            samples[name].append(elapsed)
    floor = statistics.median(samples["bare posix_spawn + wait (floor)"])
    print("### 1. Launch: 8 workers of /bin/true\n")
    print("| launcher | runs | median [ms] | vs floor |\n|---|---:|---:|---:|")
    for name, s in samples.items():
        print(f"| {name} | {len(s)} | {median_ms(s):.1f} | {statistics.median(s) / floor:.2f}x |")
    print()


FAIL_FAST = 'r=${LOCAL_RANK:-$OMPI_COMM_WORLD_RANK}; [ "$r" = 3 ] && exit 7; exec sleep 60'
# The same, but every worker first leaves a background child (a DataLoader worker, a shell's
# background job): what is left of the job after the launcher has gone?
WITH_ORPHANS = 'sleep 600 & r=${LOCAL_RANK:-$OMPI_COMM_WORLD_RANK}; [ "$r" = 3 ] && exit 7; wait'


def fail_fast_benchmark(runs=(20, 10, 5), script=FAIL_FAST, title=None):
    tools = [
        ("aml-launch", [AML, "--nproc-per-node", "8", "--", "sh", "-c", script], runs[0]),
        *([("AML_BASELINE (an earlier build)", [BASELINE, "--nproc-per-node", "8", "--", "sh", "-c", script],
            runs[0])] if BASELINE else []),
        ("mpirun", MPIRUN + ["sh", "-c", script], runs[1]),
        ("torchrun", TORCHRUN + ["sh", "-c", script], runs[2]),
    ]
    print(title or "### 2. Fail-fast: 8 workers, local rank 3 exits 7 at once, the others sleep 60 s\n")
    print("| launcher | runs | median until launcher exited [ms] | median until every worker gone [ms] "
          "| exit status | processes left behind (per run) |\n|---|---:|---:|---:|---|---:|")
    for name, cmd, n in tools:
        exited, gone, statuses, leftovers = [], [], set(), []
        for _ in range(n):
            mark = f"AML_BENCH_MARK={uuid.uuid4().hex}".encode()
            env = dict(ENV, AML_BENCH_MARK=mark.split(b"=")[1].decode())
            start = time.perf_counter()
            status = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            exited.append(time.perf_counter() - start)
            statuses.add(status)
            deadline = time.perf_counter() + 5
            left = marked_pids(mark)
            while left and time.perf_counter() < deadline:
                time.sleep(0.005)
                left = marked_pids(mark)
            gone.append(time.perf_counter() - start)
            leftovers.append(len(left))
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        gone_text = f"{median_ms(gone):.1f}" if max(leftovers) == 0 else f"> 5000 ({max(leftovers)} left)"
        print(f"| {name} | {n} | {median_ms(exited):.1f} | {gone_text} | {sorted(statuses)} | "
              f"{statistics.median(leftovers):.0f} |")
    print()


def interleaved_table(title, runners, runs, work):
    """Rounds of every runner in turn; a table of medians against the first runner's (the
    direct one). `work` is removed at the end."""
    samples = {name: [] for name in runners}
    try:
        for _ in range(runs):
            for name, run in runners.items():
                samples[name].append(run())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = statistics.median(next(iter(samples.values())))
    print(f"{title}\n")
    print("| run | runs | median wall [s] | vs direct |\n|---|---:|---:|---:|")
    for name, s in samples.items():
        print(f"| {name} | {len(s)} | {statistics.median(s):.2f} | {statistics.median(s) / base:.2f}x |")
    print()


def relay_benchmark(runs=int(os.environ.get("RELAY_RUNS", "5"))):
    lines_per_worker = (1 << 30) // 100 // 8
    work = tempfile.mkdtemp(prefix="aml-relay-")

    def fresh():
        # Every run starts from an empty folder, with the last run's files written back: none
        # pays for truncating or writing back another's.
        for f in os.listdir(work):
            path = f"{work}/{f}"
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        os.sync()

    def direct():
        fresh()
        start = time.perf_counter()
        procs = []
        for i in range(8):
            with open(f"{work}/direct.{i}", "wb") as out:
                procs.append(subprocess.Popen([FLOOD, str(lines_per_worker)], stdout=out))
        for p in procs:
            assert p.wait() == 0
        return time.perf_counter() - start

    def through_aml(console, flags=(), aml=AML):
        fresh()
        with open(console, "wb") as out:
            elapsed, status = timed([aml, "--nproc-per-node", "8", "--log-dir", f"{work}/logs", *flags,
                                     "--", FLOOD, str(lines_per_worker)], stdout=out)
        assert status == 0
        sizes = [os.path.getsize(f"{work}/logs/std_log_process_{r}.txt") for r in range(8)]
        assert sizes == [lines_per_worker * 100] * 8, sizes
        return elapsed

    # The last two rows take the relay apart: the console showing one rank of eight (what is
    # left is the cost of running under aml-launch at all), and untagged lines (reading the log
    # files back without tagging).
    runners = {
        "workers writing straight to files": direct,
        "aml-launch, tagged console to /dev/null + log files": lambda: through_aml("/dev/null"),
        "aml-launch, tagged console to a file + log files": lambda: through_aml(f"{work}/console"),
        "aml-launch, console showing local rank 0 only + log files":
            lambda: through_aml("/dev/null", ["--local-ranks-filter", "0"]),
        "aml-launch, untagged console to /dev/null + log files":
            lambda: through_aml("/dev/null", ["--tag", "none"]),
    }
    if BASELINE:
        runners["AML_BASELINE (an earlier build), tagged console to /dev/null + log files"] = \
            lambda: through_aml("/dev/null", aml=BASELINE)
    interleaved_table(f"### 3. Relay: 8 workers x {lines_per_worker:,} lines of 100 bytes (1 GiB in all)",
                      runners, runs, work)


def relay_one_worker_benchmark(runs=int(os.environ.get("RELAY_RUNS", "5"))):
    """A per-process launch's usual case: one worker, its console a file, no log file."""
    lines = (1 << 30) // 100
    work = tempfile.mkdtemp(prefix="aml-relay-one-")

    def run(command):
        for f in os.listdir(work):
            os.remove(f"{work}/{f}")
        os.sync()
        with open(f"{work}/console", "wb") as out:
            elapsed, status = timed(command, stdout=out)
        assert status == 0 and os.path.getsize(f"{work}/console") == lines * 100
        return elapsed

    runners = {
        "the worker writing straight to the file": lambda: run([FLOOD, str(lines)]),
        "aml-launch -- worker > file": lambda: run([AML, "--", FLOOD, str(lines)]),
    }
    if BASELINE:
        runners["AML_BASELINE (an earlier build) -- worker > file"] = \
            lambda: run([BASELINE, "--", FLOOD, str(lines)])
    interleaved_table(f"### 3b. One worker (a per-process launch): {lines:,} lines of 100 bytes (1 GiB) "
                      "to its console, a file; no log file", runners, runs, work)


def memory_kib(pid, field, path="status"):
    """A kB field of /proc/PID/status (or of another /proc/PID file, e.g. smaps_rollup)."""
    try:
        with open(f"/proc/{pid}/{path}") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0  # gone, or a zombie: no memory lines any more


def peak_rss_kib(pid):
    return memory_kib(pid, "VmHWM")


def launcher_processes(pid):
    """The launcher's own processes: the pid, and its supervising child where there is one
    (aml-launch's guardian and supervisor)."""
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            for child in f.read().split():
                with open(f"/proc/{child}/comm") as comm:
                    if comm.read().strip() == "aml-launch":
                        pids.append(int(child))
    except OSError:
        pass
    return pids


def memory_benchmark(runs=3):
    """The launcher's own peak RSS (not its workers'; aml-launch's two processes summed, the pages
    they share counted twice), read while 8 workers still sleep."""
    worker = ["sh", "-c", "sleep 2"]
    tools = {
        "aml-launch --nproc-per-node 8": [AML, "--nproc-per-node", "8", "--"] + worker,
        **({"AML_BASELINE (an earlier build) --nproc-per-node 8": [BASELINE, "--nproc-per-node", "8", "--"] + worker}
           if BASELINE else {}),
        "mpirun --oversubscribe -np 8": MPIRUN + worker,
        "torchrun --nproc_per_node 8": TORCHRUN + worker,
    }
    print("### 4. Memory: the launcher's own peak RSS (VmHWM) with 8 workers running\n")
    print("| launcher | runs | median peak RSS [MiB] |\n|---|---:|---:|")
    for name, cmd in tools.items():
        peaks = []
        for _ in range(runs):
            proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            peak = 0
            while proc.poll() is None:  # the high-water mark, up to the launcher's last moment
                # aml-launch is two processes (guardian and supervisor): both count.
                peak = max(peak, sum(peak_rss_kib(p) for p in launcher_processes(proc.pid)))
                time.sleep(0.05)
            assert proc.returncode == 0, name
            peaks.append(peak)
        print(f"| {name} | {runs} | {statistics.median(peaks) / 1024:.1f} |")
    print()


if __name__ == "__main__":
    # What the launchers leave in TMPDIR (torchrun's torchelastic_* folders) goes with this run.
    # Made here, not on import: the benchmarks that import this file re-run themselves in a
    # network namespace with exec, which no atexit outlives.
    ENV["TMPDIR"] = tempfile.mkdtemp(prefix="aml-supervision-")
    atexit.register(shutil.rmtree, ENV["TMPDIR"], True)
    chosen = sys.argv[2:] or ["launch", "failfast", "relay", "relay1", "memory"]
    orphans = lambda: fail_fast_benchmark(
        (10, 5, 3), WITH_ORPHANS,
        "### 2b. Fail-fast with orphans: every worker first starts `sleep 600 &`, local rank 3 exits 7\n")
    for name, run in (("launch", launch_benchmark), ("failfast", fail_fast_benchmark), ("orphans", orphans),
                      ("relay", relay_benchmark), ("relay1", relay_one_worker_benchmark),
                      ("memory", memory_benchmark)):
        if name in chosen or (name == "orphans" and "failfast" in chosen):
            run()
