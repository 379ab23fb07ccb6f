# Four torch gloo ranks; rank 2 gets stuck in its own data loading after two steps, the
# others wait for it in all_reduce. With TORCHELASTIC_RESTART_COUNT above 0 (a restart) none
# gets stuck.
import os
import threading
import time

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

# A line a second until the group is up: meeting the others can take more than the test's
# --hang-timeout on a busy machine, and that start-up is not the hang this job is about. Not
# before torch is imported: an import that waits on the disk holds the GIL, so the line would
# stop while the rank has already shown progress; silence before a rank's first line is
# start-up to the launcher (--hang-startup-timeout), however long.
started = threading.Event()


def starting():
    print("starting", flush=True)
    while not started.wait(1.0):
        print("starting", flush=True)


threading.Thread(target=starting, daemon=True).start()

dist.init_process_group("gloo")
started.set()
rank = dist.get_rank()
restarted = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")) > 0


def load_batch(step):
    if rank == 2 and step >= 2 and not restarted:
        stuck = os.environ.get("HANG_STUCK_FILE")
        if stuck:  # when the hang began: the test bounds the launcher's time from here
            with open(stuck + ".part", "w") as f:
                f.write(f"{time.time_ns() // 1000000}\n")
            os.rename(stuck + ".part", stuck)
        time.sleep(600)
    return torch.ones(4)


for step in range(5 if restarted else 100):
    batch = load_batch(step)
    dist.all_reduce(batch)
    if rank == 0:
        print("step", step, flush=True)
print("rank", rank, "done", flush=True)
# gloo's teardown at interpreter exit can abort (SIGABRT) while a peer closes its side: not
# what these tests are about.
os._exit(0)
