"""Communicators, side by side in one run (issue 5):
  1. allreduce bus bandwidth, 4 ranks on one host (loopback), float32, 1 KiB to 64 MiB:
     aml::comm gloo vs torch.distributed gloo (Debian's python3-torch) vs Open MPI's
     MPI_Allreduce (through aml::comm's mpi backend, under mpirun);
  2. bootstrap: 8 ranks, from the launch to the moment the last rank has a ready
     communicator: aml::comm gloo vs torch's init_process_group("gloo") (its interpreter
     start and import included: that is what a user waits for).
Each row is the median over RUNS repetitions (interleaved) of each repetition's median time.
busbw = algbw x 2(n-1)/n, as nccl-tests report it.
usage: /usr/bin/python3 benchmarks/comm_bench.py [BUILD_DIR [RUNS]]"""
import os
import re
import statistics
import subprocess
import sys
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
HERE = os.path.dirname(os.path.abspath(__file__))
AML = f"{BUILD}/launcher/aml-launch"
BENCH = f"{BUILD}/benchmarks/comm_bench"
TORCH = ["/usr/bin/python3", f"{HERE}/torch_comm_bench.py"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
RANKS = 4


def run(cmd):
    out = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stdout}")
    return out.stdout


def sizes(output):
    return {int(m[1]): float(m[2]) for m in re.finditer(r"size (\d+) median_s ([0-9.]+)", output)}


def ready_times(output):
    return [float(m[1]) for m in re.finditer(r"ready ([0-9.]+)", output)]


def bandwidth():
    tools = {
        "aml gloo": [AML, "--nproc-per-node", str(RANKS), "--", BENCH, "--backend", "gloo"],
        "torch gloo": [AML, "--nproc-per-node", str(RANKS), "--"] + TORCH,
        "Open MPI": ["mpirun", "--oversubscribe", "-np", str(RANKS), AML, "--", BENCH, "--backend", "mpi"],
    }
    per_tool = {name: {} for name in tools}
    for _ in range(RUNS):
        for name, cmd in tools.items():
            for size, seconds in sizes(run(cmd)).items():
                per_tool[name].setdefault(size, []).append(seconds)
    factor = 2 * (RANKS - 1) / RANKS
    print(f"### Allreduce, {RANKS} ranks on one host, float32: bus bandwidth [GB/s] (median time [ms])\n")
    print("| size | aml gloo | torch gloo | Open MPI | aml / torch |\n|---:|---:|---:|---:|---:|")
    for size in sorted(per_tool["aml gloo"]):
        cells, busbw = [], {}
        for name in tools:
            t = statistics.median(per_tool[name][size])
            busbw[name] = size / t * factor / 1e9
            cells.append(f"{busbw[name]:.3f} ({t * 1000:.2f})")
        label = f"{size // 1024} KiB" if size < (1 << 20) else f"{size >> 20} MiB"
        print(f"| {label} | " + " | ".join(cells) + f" | {busbw['aml gloo'] / busbw['torch gloo']:.2f} |")
    print()


def bootstrap(ranks=8):
    tools = {
        "aml::comm gloo (C++)": [AML, "--nproc-per-node", str(ranks), "--", BENCH, "--backend", "gloo",
                                 "--bootstrap-only"],
        "torch init_process_group(gloo) (Python)": [AML, "--nproc-per-node", str(ranks), "--"] + TORCH +
                                                   ["--bootstrap-only"],
    }
    samples = {name: [] for name in tools}
    for _ in range(max(RUNS, 5)):
        for name, cmd in tools.items():
            start = time.time()
            ready = ready_times(run(cmd))
            assert len(ready) == ranks, ready
            samples[name].append(max(ready) - start)
    print(f"### Bootstrap: {ranks} ranks, launch until the last rank's communicator is ready\n")
    print("| communicator | runs | median [ms] |\n|---|---:|---:|")
    for name, s in samples.items():
        print(f"| {name} | {len(s)} | {statistics.median(s) * 1000:.1f} |")
    print()


if __name__ == "__main__":
    bandwidth()
    bootstrap()
