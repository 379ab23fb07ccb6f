# What else torch does with its store, through the launcher's (one node, two ranks):
# init_process_group over tcp://, new_group, the object collectives, and torch.distributed.rpc.
import datetime
import os

import torch
import torch.distributed as dist
import torch.distributed.rpc as rpc

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
url = f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
dist.init_process_group("gloo", init_method=url, rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=60))
group = dist.new_group(list(range(world)))
gathered = [None] * world
dist.all_gather_object(gathered, {"rank": rank}, group=group)
rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
answer = rpc.rpc_sync(f"worker{(rank + 1) % world}", torch.add, args=(torch.ones(1), rank))
rpc.shutdown()
print(f"rank {rank} gathered {[g['rank'] for g in gathered]} rpc {answer.item()}", flush=True)
dist.destroy_process_group()
