# Four torch gloo ranks; rank 2 gets stuck in its own data loading after two steps, the
# others wait for it in all_reduce. With TORCHELASTIC_RESTART_COUNT above 0 (a restart) none
# gets stuck.
import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
restarted = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")) > 0


def load_batch(step):
    if rank == 2 and step >= 2 and not restarted:
        time.sleep(600)
    return torch.ones(4)


for step in range(5 if restarted else 100):
    batch = load_batch(step)
    dist.all_reduce(batch)
    if rank == 0:
        print("step", step, flush=True)
print("rank", rank, "done", flush=True)
