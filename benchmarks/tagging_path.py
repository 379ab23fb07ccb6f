"""The console tagging's AVX2 path against its portable one (memchr and memcpy per line: what
the aarch64 build ran before its NEON path), the same tree built both ways
(cmake -DAML_SIMD_TAGGING=OFF), in the
same rounds: the relay of 8 workers with tagged console and log files, the wall time and the
launcher's own CPU, for 100-byte lines and for 12-byte ones (the portable path's worst case in
bench_tag_lines). Whether a SIMD path of its own is worth having on a CPU is decided here, on
x86: what the portable path costs a relay end to end.

usage: /usr/bin/python3 benchmarks/tagging_path.py BUILD_DIR PORTABLE_PATH_AML_LAUNCH
RUNS=N: rounds (7).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import supervision as sv
from portable_binary import LINES_PER_WORKER, launcher_cpu_seconds
from side_by_side import SideBySide

AVX2 = sv.AML
PORTABLE = os.path.abspath(sys.argv[2])
COMPARE = SideBySide({"AVX2 path (build/launcher/aml-launch)": AVX2,
                      "portable path (-DAML_SIMD_TAGGING=OFF)": PORTABLE}, AVX2, "portable / AVX2")
SHORT_BYTES = 32 << 20  # per worker: 2.8 million lines of 12 bytes
WORKLOADS = {
    "100-byte lines, 8 x 128 MiB": ([sv.FLOOD, str(LINES_PER_WORKER)], LINES_PER_WORKER * 100),
    "12-byte lines, 8 x 32 MiB": (["sh", "-c", f"yes 12345678901 | head -c {SHORT_BYTES}"], SHORT_BYTES),
}


def run(binary, command, size, logs, on_start=None):
    shutil.rmtree(logs, ignore_errors=True)
    proc = subprocess.Popen([binary, "--nproc-per-node", "8", "--log-dir", logs, "--"] + command,
                            stdout=subprocess.DEVNULL, env=sv.ENV)
    figure = on_start(proc) if on_start else None
    assert proc.wait() == 0
    sizes = [os.path.getsize(f"{logs}/std_log_process_{r}.txt") for r in range(8)]
    assert sizes == [size] * 8, sizes
    return figure


def main():
    runs = int(os.environ.get("RUNS", "7"))
    work = tempfile.mkdtemp(prefix="aml-tagging-")
    print(f"## tagging_path.py, {time.strftime('%Y-%m-%d')}, {os.uname().nodename}, "
          f"{os.cpu_count()} CPUs, {runs} alternating runs\n")
    try:
        for name, (command, size) in WORKLOADS.items():
            def wall(binary):
                start = time.perf_counter()
                run(binary, command, size, f"{work}/logs")
                return time.perf_counter() - start
            walls = COMPARE.interleaved(runs, wall)
            cpu = COMPARE.interleaved(3, lambda b: run(b, command, size, f"{work}/logs",
                                                       launcher_cpu_seconds))
            COMPARE.table(f"### Relay, {name}: tagged console to /dev/null + log files", "s",
                          walls, "{:.3f}")
            COMPARE.table(f"### Relay, {name}: the launcher's own CPU", "s", cpu, "{:.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
