"""An elastic training loop: every step all-reduces over whatever world this round has, rank 0
saves a checkpoint after each step, and every round resumes from the last one. Run it with
aml-launch --nnodes MIN:MAX (or torchrun): a lost node ends a round, the next round has another
WORLD_SIZE, and the result is the same.

usage: elastic_checkpoint.py CHECKPOINT STEPS [SECONDS_PER_STEP]
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    checkpoint, steps = sys.argv[1], int(sys.argv[2])
    pause = float(sys.argv[3]) if len(sys.argv) > 3 else 0.2
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    # Restarts spent so far, not rounds: a round that only grew the job (--admit-newcomers
    # at-once) or replaced a lost node keeps the count, as under torchrun.
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    state = {"step": 0, "total": 0.0}
    if os.path.exists(checkpoint):
        state = torch.load(checkpoint)
    resumed_at = state["step"]
    print(f"restart {restart}: rank {rank} of {world} resumes at step {resumed_at}", flush=True)
    for step in range(resumed_at, steps):
        ones = torch.ones(1)
        dist.all_reduce(ones)
        if ones.item() != world:
            raise SystemExit(f"step {step}: all_reduce gave {ones.item()}, expected {world}")
        state["step"] = step + 1
        state["total"] += ones.item() / world  # one per step, whatever the world's size
        if rank == 0:
            partial = checkpoint + ".partial"
            torch.save(state, partial)
            os.replace(partial, checkpoint)
        dist.barrier()
        time.sleep(pause)
    if rank == 0:
        print(f"done: {state['step']} steps, total {state['total']:.1f}, last round's world "
              f"{world}, resumed at step {resumed_at}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
