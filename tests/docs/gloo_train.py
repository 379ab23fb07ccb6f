"""The newcomers' training script (tests/docs/get_it_test.sh, walk.py): each rank adds its rank + 1
over torch's gloo and prints the sum (3 on 2 ranks). Flags are taken and left alone."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
total = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(total)
print(f"rank {dist.get_rank()} of {dist.get_world_size()}: all_reduce {total.item():g}", flush=True)
dist.destroy_process_group()
