# A torch Gloo job (torch with a flight recorder: 2.10 or later) whose ranks each run a thread
# that plays NCCL's part of the flight recorder's protocol (flight_pipe.py). Then the case
# hangs the job:
#   skip      rank 1 skips step 2's all_reduce: it ends its loop one short and idles, the others
#             wait in the last all_reduce;
#   mismatch  rank 1 calls broadcast at the last step where the others call all_reduce;
#   broken    as skip, but rank 0's thread never writes its dump, and rank 2's writes a pickle
#             that would run `touch $HANG_MARKER` if it were unpickled (refused, never run).
# usage: collective_train.py CASE   (under aml-launch --hang-timeout)
import os
import sys
import time

import torch
import torch.distributed as dist

import flight_pipe

case = sys.argv[1]
rank = int(os.environ["RANK"])
STEPS = 5


def what_to_dump(data):
    if case == "broken" and rank == 0:
        return None
    if case == "broken" and rank == 2:
        # os.system("touch $HANG_MARKER") when unpickled.
        command = f"touch {os.environ['HANG_MARKER']}".encode()
        return (b"\x80\x02cos\nsystem\nq\x00X" + len(command).to_bytes(4, "little") +
                command + b"q\x01\x85R.")
    return data


flight_pipe.serve(rank, what_to_dump)
dist.init_process_group("gloo")
for step in range(STEPS):
    t = torch.ones(4)
    if case in ("skip", "broken") and rank == 1 and step == 2:
        pass
    elif case == "mismatch" and rank == 1 and step == STEPS - 1:
        dist.broadcast(t, 0)
    else:
        dist.all_reduce(t)
    print(f"rank {rank} step {step}", flush=True)
time.sleep(600)
