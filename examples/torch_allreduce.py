"""Every rank contributes its rank to an all_reduce over gloo (torch.distributed env://);
the sum is checked everywhere and only the master prints it.

    aml-launch --nproc-per-node 4 -- /usr/bin/python3 examples/torch_allreduce.py
"""
import ctypes
import os
import sys
import time

import torch
import torch.distributed as dist


def is_master(rank):
    # The rank library, when its path is given; torch's rank 0 otherwise (the same rule).
    library = os.environ.get("AML_RANK_LIBRARY")
    return bool(ctypes.CDLL(library).aml_is_master()) if library else rank == 0


def main():
    start = time.perf_counter()
    dist.init_process_group("gloo")  # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    rank, world = dist.get_rank(), dist.get_world_size()
    assert rank == int(os.environ["RANK"]) and world == int(os.environ["WORLD_SIZE"])
    total = torch.tensor([float(rank)])
    dist.all_reduce(total)
    expected = world * (world - 1) / 2
    if total.item() != expected:
        print(f"rank {rank}: all_reduce gave {total.item()}, expected {expected}", file=sys.stderr)
        return 1
    if is_master(rank):
        elapsed = time.perf_counter() - start
        print(f"all_reduce of ranks 0..{world - 1} = {total.item():.0f} (expected {expected:.0f}): ok, {elapsed:.2f} s")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
