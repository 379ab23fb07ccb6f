# A torch job of the worker-store tests: gloo over env://, two all_reduces around a gate (the
# stranger's window: GATE=FILE holds the second until the test creates FILE, at most 90 s), rank 0's worker failing in round 0 when asked, a key of round 0 looked
# for in round 1, and (PLUS_K=k) a store of rank 0's own at MASTER_PORT+k that every rank
# reaches, as Megatron-LM's in-process restart has one. Each rank says what it saw, and with
# ENV_DUMP=DIR writes its environment to DIR/env.RANK.json.
import datetime
import json
import os
import sys
import time

import torch
import torch.distributed as dist

mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
rank = int(os.environ["RANK"])
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
print(f"rank {rank} meets at {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}", flush=True)
if os.environ.get("ENV_DUMP"):
    with open(os.path.join(os.environ["ENV_DUMP"], f"env.{rank}.json"), "w") as f:
        json.dump(dict(os.environ), f)
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
if os.environ.get("PLUS_K"):
    port = int(os.environ["MASTER_PORT"]) + int(os.environ["PLUS_K"])
    own = dist.TCPStore(os.environ["MASTER_ADDR"], port, None, rank == 0,
                        datetime.timedelta(seconds=30))
    own.set(f"rank-{rank}", "here")
    own.wait([f"rank-{r}" for r in range(dist.get_world_size())])
    print(f"rank {rank} reached rank 0's own store at MASTER_PORT+{os.environ['PLUS_K']}",
          flush=True)
t = torch.ones(1) * (rank + 1)
dist.all_reduce(t)
# The job's own store as a user's code reaches it: MASTER_ADDR:MASTER_PORT, not its master.
store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), None, False,
                      datetime.timedelta(seconds=30))
if attempt == 0:
    store.add("from-round-0", 1)
dist.barrier()
stale = store.add("from-round-0", 0)  # 4 in round 0; 0 in a round that starts empty
print(f"rank {rank} attempt {attempt} first sum {t.item()} stale {stale}", flush=True)
if mode == "rank0-fails" and attempt == 0:
    if rank == 0:
        time.sleep(1)
        os._exit(7)
    # The others block on the store until the launcher stops them: rank 0's death is not theirs.
    store.wait(["never"], datetime.timedelta(seconds=60))
    print(f"rank {rank}: the wait ended", flush=True)
    sys.exit(0)
# A gate, not a pause: on a loaded machine the test's checks in the window outlast any fixed pause.
if os.environ.get("GATE"):
    deadline = time.monotonic() + 90
    while not os.path.exists(os.environ["GATE"]) and time.monotonic() < deadline:
        time.sleep(0.05)
t = torch.ones(1)
dist.all_reduce(t)
print(f"rank {rank} attempt {attempt} second sum {t.item()}", flush=True)
dist.destroy_process_group()
