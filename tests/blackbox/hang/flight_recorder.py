# Stands in for PyTorch's NCCL watchdog where there is no GPU: makes the Flight Recorder's pipe
# at TORCH_NCCL_DEBUG_INFO_PIPE_FILE<rank>.pipe, as ProcessGroupNCCL does, and writes the
# "dump" to TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank> when the pipe is written. Then hangs.
import os
import threading
import time

rank = os.environ["RANK"]
pipe = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] + rank + ".pipe"
dump = os.environ["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"] + rank
os.mkfifo(pipe)


def watchdog():
    with open(pipe) as p:
        request = p.read(1)
    with open(dump, "w") as d:
        d.write(f"flight recorder of rank {rank}: asked with {request!r}\n")


threading.Thread(target=watchdog, daemon=True).start()
time.sleep(600)
