# The part of the flight recorder's protocol that ProcessGroupNCCL plays on a GPU, played by a
# thread of a torch Gloo rank (torch 2.10 or later records Gloo's collectives too): it makes the
# pipe at TORCH_NCCL_DEBUG_INFO_PIPE_FILE<rank>.pipe and, each time the launcher writes it,
# writes torch's own dump to the path the launcher named (TORCH_FR_DUMP_TEMP_FILE<rank>, or
# TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>). `dump` may change what is written (None: nothing).
# Under AML_LAUNCH_TEST_CLOCK_SKEW_NS (a test's node whose clock is off, as its launcher's is)
# the recorder's times are shifted by as much.
import os
import pickle
import threading

import torch


SKEW_NS = int(os.environ.get("AML_LAUNCH_TEST_CLOCK_SKEW_NS", "0"))
# Held while a dump is made: stop() waits for one under way. A daemon thread still inside torch
# while the interpreter shuts down aborts the process (NCCL's own dump thread is joined).
_dumping = threading.Lock()
_stopped = False


def stop():
    """Before destroy_process_group(): no dump is made from here on."""
    global _stopped
    with _dumping:
        _stopped = True


def skewed(data):
    if not SKEW_NS:
        return data
    trace = pickle.loads(data)  # torch's own dump, in the test's own process
    for entry in trace.get("entries", []):
        for key in ("time_created_ns", "time_discovered_started_ns", "time_discovered_completed_ns"):
            if isinstance(entry.get(key), int) and entry[key] > 0:
                entry[key] += SKEW_NS
    return pickle.dumps(trace, protocol=2)


def serve(rank, dump=lambda data: data):
    pipe = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] + str(rank) + ".pipe"
    path = (os.environ.get("TORCH_FR_DUMP_TEMP_FILE") or
            os.environ["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"]) + str(rank)
    if not os.path.exists(pipe):  # a round before this one's rank made it (torch keeps it too)
        os.mkfifo(pipe)

    def loop():
        while True:
            with open(pipe, "rb") as p:
                p.read()
            with _dumping:
                if _stopped:
                    return
                data = dump(skewed(torch._C._distributed_c10d._dump_fr_trace()))
                if data is None:
                    continue
                with open(path + ".tmp", "wb") as f:
                    f.write(data)
                os.replace(path + ".tmp", path)

    threading.Thread(target=loop, daemon=True).start()
