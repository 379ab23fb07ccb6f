# Four torch gloo ranks whose start-up is silent for longer than the test's --hang-timeout
# (a sleep before init_process_group, as a checkpoint's load would be), then work: ten steps,
# rank 0 printing each, and every rank says it is done. Healthy: never a hang.
import os
import sys
import time

time.sleep(float(sys.argv[1]))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

dist.init_process_group("gloo")
rank = dist.get_rank()
for step in range(10):
    t = torch.ones(4)
    dist.all_reduce(t)
    if rank == 0:
        print("step", step, flush=True)
    time.sleep(0.3)
print("rank", rank, "done", flush=True)
os._exit(0)  # gloo's teardown is not what this test is about
