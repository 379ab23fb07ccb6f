"""The release's aml-preflight (Gloo compiled from source with Zig's clang and libc++, glibc
2.17) against the gcc build's (Debian's libgloo), side by side in the same rounds: the whole
`--preflight=gloo` on 2 ranks (8 B to 64 MiB), its busbw at 64 MiB and its time at 2 MiB as
rank 0 prints them. Each launcher runs the aml-preflight beside it. The question: does the
release's own Gloo cost anything?

usage: /usr/bin/python3 benchmarks/preflight_release.py BUILD_DIR DIST_DIR   (RUNS=N: 7)
"""
import os
import re
import subprocess
import sys
import time

from side_by_side import SideBySide

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
DIST = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "dist")
GCC = os.path.join(BUILD, "launcher", "aml-launch")
RELEASE = os.path.join(DIST, "aml-launch")
BINARIES = {"gcc build (Debian's libgloo)": GCC, "release (Gloo built with Zig)": RELEASE}
COMPARE = SideBySide(BINARIES, GCC, "release / gcc")
ROW = re.compile(r"^\[rank 0\]\s+(\d+ (?:B|KiB|MiB))\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+0$")


def preflight(binary):
    start = time.perf_counter()
    out = subprocess.run([binary, "--nproc-per-node", "2", "--preflight=gloo", "--", "true"],
                         capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - start
    rows = {m.group(1): m for m in map(ROW.match, out.splitlines()) if m}
    assert "64 MiB" in rows and "passed" in out, out
    return wall, float(rows["64 MiB"].group(4)), float(rows["2 MiB"].group(2))


def main():
    runs = int(os.environ.get("RUNS", "7"))
    samples = COMPARE.interleaved(runs, preflight)
    print(f"## preflight_release.py, {time.strftime('%Y-%m-%d')}, {os.uname().nodename}, "
          f"{os.cpu_count()} CPUs, {runs} alternating runs\n")
    for index, (title, unit, fmt) in enumerate([
            ("### The whole --preflight=gloo, 2 ranks (8 B to 64 MiB)", "s", "{:.2f}"),
            ("### busbw at 64 MiB (higher is better)", "GB/s", "{:.3f}"),
            ("### allreduce of 2 MiB", "us", "{:.1f}")]):
        COMPARE.table(title, unit, {b: [s[index] for s in v] for b, v in samples.items()}, fmt)


if __name__ == "__main__":
    main()
