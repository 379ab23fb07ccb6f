# A torch Gloo training loop for --straggler-check, its ranks' flight recorders served by
# flight_pipe.py: each step computes for STEP seconds (a sleep), then all_reduces a tensor whose
# sum is checked. With CASE slow, rank SLOW_RANK (default 1) computes LATE seconds longer at
# every step; with CASE equal, no rank does. STEPS is the most steps: once STOP_FILE exists rank
# 0 says so in a step's all_reduce, and every rank ends after that same step (a test ends the
# job once the launcher has seen what it waits for, however slow the machine). An elastic job's
# test: in round 0 rank 0 exits 3 once FAIL_FILE exists (the round fails); a later round runs
# LATER_STEPS steps.
# usage: straggler_train.py CASE STEPS [STEP [LATE]]   (under aml-launch --straggler-check)
import os
import sys
import time

import torch
import torch.distributed as dist

import flight_pipe

case, steps = sys.argv[1], int(sys.argv[2])
step_seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3
late_seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 0.2
rank = int(os.environ["RANK"])
first_round = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") == "0"
if not first_round:
    steps = int(os.environ.get("LATER_STEPS", steps))
fail_file = os.environ.get("FAIL_FILE", "") if first_round and rank == 0 else ""
slow = case == "slow" and rank == int(os.environ.get("SLOW_RANK", "1"))
stop_file = os.environ.get("STOP_FILE", "") if rank == 0 else ""


def leave(status):
    """Ends the rank without the interpreter's teardown: under load, the teardown of torch 2.15
    after a Gloo job whose recorder a thread dumped aborted a rank now and then, after its script
    had ended ("terminate called without an active exception", no Python frame left)."""
    flight_pipe.stop()
    if status == 0:
        dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


flight_pipe.serve(rank)
dist.init_process_group("gloo")
world = dist.get_world_size()
for step in range(steps):
    if fail_file and os.path.exists(fail_file):
        leave(3)
    time.sleep(step_seconds + (late_seconds if slow else 0))
    t = torch.ones(5)
    t[4] = 1.0 if stop_file and os.path.exists(stop_file) else 0.0
    dist.all_reduce(t)
    if t[0].item() != world:
        print(f"rank {rank} step {step}: all_reduce gave {t[0].item()}, not {world}", file=sys.stderr)
        leave(1)
    print(f"rank {rank} step {step} at {time.time():.3f}", flush=True)
    if t[4].item() > 0:
        break
leave(0)
