"""The training script the Azure ML examples run: torch.distributed from the environment
aml-launch gives every worker (env://), an all_reduce, and only the master prints."""
import os
import sys

import torch
import torch.distributed as dist

backend = "nccl" if torch.cuda.is_available() else "gloo"
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
if backend == "nccl":
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
value = torch.tensor([float(rank)], device="cuda" if backend == "nccl" else "cpu")
dist.all_reduce(value)
if rank == 0:
    print(f"{world} ranks, sum of ranks {value.item():.0f}, args {sys.argv[1:]}")
dist.destroy_process_group()
