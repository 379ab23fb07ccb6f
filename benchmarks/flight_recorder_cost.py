"""What a flight recorder dump costs a training job's step time (issue 74's sampling: at
--straggler-check S every rank is asked for a dump every S seconds).

Each launch: aml-launch --nproc-per-node 2 --hang-timeout 600 (which sets the recorder's
variables and makes the pipes) runs WORKER below under the newest torch over Gloo: it fills the
recorder's 2000-entry buffer first (the worst case for a dump), then times STEPS steps of a
small compute and an all_reduce. Its thread answers the pipe as NCCL's watchdog does: torch's
own _dump_fr_trace(), written to the dump file, timed. This script writes every rank's pipe
every S seconds meanwhile; a setting `check:S` instead runs the launcher with
--straggler-check S (the launcher asks, reads and compares: the whole sampling). Settings run
interleaved (off, S..., off, S..., REPEATS times): the machine is shared and noisy; medians,
and ratios to "off" of the same repeat. A rank's first dump (its recorded stacks symbolized,
once) is reported apart from the rest.

usage: benchmarks/flight_recorder_cost.py AML_LAUNCH TORCH_PYTHON [REPEATS] [S|check:S ...]
       (default 3 repeats, S = 0.5 2; the newest torch: ~/.cache/aml-launch/torch-2.15/bin/python;
       FR_COST_STEPS steps a launch, default 1500: a --straggler-check of 60 wants ~12000)
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time

WORKER = r'''
import json, os, sys, threading, time
import torch, torch.distributed as dist
rank = int(os.environ["RANK"])
out = sys.argv[1]
dumps = []
def answer():
    pipe = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] + str(rank) + ".pipe"
    dump = (os.environ.get("TORCH_FR_DUMP_TEMP_FILE") or os.environ["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"]) + str(rank)
    os.mkfifo(pipe)
    while True:
        with open(pipe, "rb") as p:
            p.read()
        t0 = time.perf_counter()
        data = torch._C._distributed_c10d._dump_fr_trace()
        with open(dump + ".tmp", "wb") as f:
            f.write(data)
        os.replace(dump + ".tmp", dump)
        dumps.append((time.perf_counter() - t0, len(data)))
threading.Thread(target=answer, daemon=True).start()
torch.set_num_threads(1)
dist.init_process_group("gloo")
small = torch.ones(16)
for _ in range(2100):  # the buffer full: a dump at its largest
    dist.all_reduce(small)
a = torch.randn(256, 256)
steps = []
for _ in range(int(os.environ["STEPS"])):
    t0 = time.perf_counter()
    for _ in range(8):
        a = torch.tanh(a @ a * 0.01)
    dist.all_reduce(small)
    steps.append(time.perf_counter() - t0)
with open(f"{out}.{rank}", "w") as f:
    json.dump({"steps": steps, "dumps": dumps}, f)
'''


def launch(bin_path, python, work, every, steps):
    """One launch; every: seconds between pipe writes, "check:S" (the launcher's own
    --straggler-check S), or None. Its ranks' timings."""
    logs = tempfile.mkdtemp(dir=work)
    script = os.path.join(work, "worker.py")
    out = os.path.join(logs, "timings")
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "TMPDIR": work, "STEPS": str(steps)}
    sampling = (["--straggler-check", every[len("check:"):]] if isinstance(every, str)
                else ["--hang-timeout", "600"])
    proc = subprocess.Popen([bin_path, "--nproc-per-node", "2"] + sampling +
                            ["--log-dir", logs, "--", python, script, out],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop = threading.Event()

    def ask():
        while isinstance(every, float) and not stop.wait(every):
            for rank in (0, 1):
                try:
                    fd = os.open(f"{logs}/nccl_pipe_rank_{rank}.pipe", os.O_WRONLY | os.O_NONBLOCK)
                    os.write(fd, b"1\n")
                    os.close(fd)
                except OSError:
                    pass  # not listening yet (importing torch)
    asker = threading.Thread(target=ask)
    asker.start()
    status = proc.wait()
    stop.set()
    asker.join()
    if status != 0:
        sys.exit(f"flight_recorder_cost: a launch ended {status} (logs: {logs})")
    ranks = []
    for rank in (0, 1):
        with open(f"{out}.{rank}") as f:
            ranks.append(json.load(f))
    return ranks


def name(setting):
    if setting is None:
        return "off"
    if isinstance(setting, str):
        return f"--straggler-check {setting[len('check:'):]}"
    return f"every {setting:g} s"


def main():
    bin_path, python = os.path.abspath(sys.argv[1]), sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    periods = [s if s.startswith("check:") else float(s) for s in sys.argv[4:]] or [0.5, 2.0]
    steps = int(os.environ.get("FR_COST_STEPS", "1500"))
    work = tempfile.mkdtemp(prefix="aml-fr-cost-")
    with open(os.path.join(work, "worker.py"), "w") as f:
        f.write(WORKER)
    settings = [None] + periods
    rows = {s: [] for s in settings}
    dump_times, dump_sizes, first_dumps = [], [], []
    try:
        for r in range(repeats):
            medians = {}
            for every in settings:
                ranks = launch(bin_path, python, work, every, steps)
                # The job's step is its slowest rank's: the all_reduce waits for it.
                step = [max(a, b) for a, b in zip(ranks[0]["steps"], ranks[1]["steps"])]
                medians[every] = statistics.median(step)
                rows[every].append((statistics.median(step), statistics.mean(step),
                                    sum(len(k["dumps"]) for k in ranks)))
                for k in ranks:
                    first_dumps += [d[0] for d in k["dumps"][:1]]
                    dump_times += [d[0] for d in k["dumps"][1:]]
                    dump_sizes += [d[1] for d in k["dumps"][1:]]
            print(f"repeat {r + 1}: " + ", ".join(
                f"{name(s)} median {medians[s] * 1e3:.2f} ms" for s in settings), flush=True)
    finally:
        subprocess.run(["rm", "-rf", work])
    print(f"\n{platform.node()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; "
          f"{steps} steps a launch, 2 ranks, torch from {python}")
    print("| sampling | median step (ms) | mean step (ms) | dumps a launch | mean vs off |")
    print("|---|---|---|---|---|")
    off_mean = statistics.median(m for _, m, _ in rows[None])
    for s in settings:
        med = statistics.median(x for x, _, _ in rows[s])
        mean = statistics.median(m for _, m, _ in rows[s])
        n = statistics.median(d for _, _, d in rows[s])
        print(f"| {name(s)} | {med * 1e3:.2f} | {mean * 1e3:.2f} | "
              f"{n:g} | {mean / off_mean:.3f} |")
    if dump_times:
        d = statistics.median(dump_times)
        first = statistics.median(first_dumps)
        print(f"\na dump (2000 entries, {statistics.median(dump_sizes) / 1e3:.0f} kB): median "
              f"{d * 1e3:.1f} ms of its rank's time (p90 "
              f"{sorted(dump_times)[int(len(dump_times) * 0.9)] * 1e3:.1f} ms); a rank's first: "
              f"median {first:.2f} s (max {max(first_dumps):.2f} s). At S = 60 over an hour: "
              f"{(first + 59 * d) / 3600 * 100:.3f} % of each rank's time; over a day: "
              f"{(first + 1439 * d) / 86400 * 100:.3f} %")


if __name__ == "__main__":
    main()
