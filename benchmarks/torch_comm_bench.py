"""torch.distributed's side of benchmarks/comm_bench.py, the same output as comm_bench.cpp:
every rank prints when its process group is ready; then rank 0 prints the median time of a
float32 all_reduce per size (gloo, env://, under aml-launch).
usage: torch_comm_bench.py [--min BYTES] [--max BYTES] [--bootstrap-only]"""
import sys
import time

args = sys.argv[1:]
min_bytes = int(args[args.index("--min") + 1]) if "--min" in args else 1024
max_bytes = int(args[args.index("--max") + 1]) if "--max" in args else 64 << 20

import torch  # noqa: E402  (imported after the arguments: its import is part of the bootstrap)
import torch.distributed as dist  # noqa: E402

dist.init_process_group("gloo")
print(f"ready {time.time():.6f}", flush=True)
if "--bootstrap-only" in args:
    sys.exit(0)
size = min_bytes
while size <= max_bytes:
    data = torch.ones(size // 4, dtype=torch.float32)
    rounds = min(200, max(5, (256 << 20) // size))
    seconds = []
    for r in range(-3, rounds):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(data)
        if r >= 0:
            seconds.append(time.perf_counter() - start)
    seconds.sort()
    if dist.get_rank() == 0:
        print(f"size {size} median_s {seconds[len(seconds) // 2]:.9f}", flush=True)
    size *= 4
