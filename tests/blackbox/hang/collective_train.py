# A torch Gloo job (torch with a flight recorder: 2.10 or later) whose ranks each run a thread
# that plays NCCL's part of the flight recorder's protocol, as ProcessGroupNCCL's does on a
# GPU: it makes the pipe at TORCH_NCCL_DEBUG_INFO_PIPE_FILE<rank>.pipe and, when the launcher
# writes it, writes torch's own dump (the recorder records Gloo's collectives too) to the path
# the launcher named. Then the case hangs the job:
#   skip      rank 1 skips step 2's all_reduce: it ends its loop one short and idles, the others
#             wait in the last all_reduce;
#   mismatch  rank 1 calls broadcast at the last step where the others call all_reduce;
#   broken    as skip, but rank 0's thread never writes its dump, and rank 2's writes a pickle
#             that would run `touch $HANG_MARKER` if it were unpickled (refused, never run).
# usage: collective_train.py CASE   (under aml-launch --hang-timeout)
import os
import sys
import threading
import time

import torch
import torch.distributed as dist

case = sys.argv[1]
rank = int(os.environ["RANK"])
STEPS = 5


def dump_on_request():
    pipe = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] + str(rank) + ".pipe"
    dump = (os.environ.get("TORCH_FR_DUMP_TEMP_FILE") or
            os.environ["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"]) + str(rank)
    os.mkfifo(pipe)
    while True:
        with open(pipe, "rb") as p:
            p.read()
        if case == "broken" and rank == 0:
            continue
        data = torch._C._distributed_c10d._dump_fr_trace()
        if case == "broken" and rank == 2:
            # os.system("touch $HANG_MARKER") when unpickled.
            command = f"touch {os.environ['HANG_MARKER']}".encode()
            data = (b"\x80\x02cos\nsystem\nq\x00X" + len(command).to_bytes(4, "little") +
                    command + b"q\x01\x85R.")
        with open(dump + ".tmp", "wb") as f:
            f.write(data)
        os.replace(dump + ".tmp", dump)


threading.Thread(target=dump_on_request, daemon=True).start()
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
