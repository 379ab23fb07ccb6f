"""The campaign's training job: a real torch Gloo loop, one allreduce a step, checked.

Each step all-reduces [(step+1) * (rank+1), notice]: the sum must be (step+1) * W(W+1)/2 on every
rank, and the second element tells every rank at the same step that a notice came (so that all
save and exit together, and the job ends as preempted rather than as a failure). The state's
`total` adds (step+1) at each step, so a checkpoint at step n must hold n(n+1)/2: a step skipped
or done twice across restarts shows there.

Every CHAOS_CKPT_EVERY steps rank 0 writes CHAOS_DIR/ckpt/step-N.json atomically (written to a
temporary name, fsync'd, renamed, the folder fsync'd). Each round resumes from the newest one
whose digest holds. Every worker writes its history, a JSON line per event, to
CHAOS_DIR/workers/HOST.PID.jsonl: spawned, start (rank, world, master), resume, each step (its result and
time), each checkpoint, its exit.
"""
import datetime
import hashlib
import json
import os
import signal
import sys
import time

DIR = os.environ["CHAOS_DIR"]
EVERY = int(os.environ.get("CHAOS_CKPT_EVERY", "10"))
STEP_S = float(os.environ.get("CHAOS_STEP_S", "0.2"))
CKPT = os.path.join(DIR, "ckpt")
log_fd = os.open(os.path.join(DIR, "workers", f"{os.environ['CHAOS_HOST']}.{os.getpid()}.jsonl"),
                 os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


def note(event, **fields):
    os.write(log_fd, (json.dumps(dict(ev=event, t=time.time(), **fields)) + "\n").encode())


# Its first line, before torch's import (a second and more of CPU): the worker's own time runs
# from its start, as its launcher's does (the reports' invariant compares them).
note("spawned")


def digest(state):
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def newest_checkpoint():
    """(state, torn names): the newest checkpoint whose digest holds, and those that do not."""
    torn, found = [], []
    for name in os.listdir(CKPT):
        if not (name.startswith("step-") and name.endswith(".json")):
            continue
        try:
            with open(os.path.join(CKPT, name)) as f:
                record = json.load(f)
            if record["digest"] != digest(record["state"]):
                raise ValueError("digest")
            found.append(record["state"])
        except (OSError, ValueError, KeyError):
            torn.append(name)
    best = max(found, key=lambda s: s["step"], default={"step": 0, "total": 0})
    return best, torn


def save(state):
    name = os.path.join(CKPT, f"step-{state['step']}.json")
    partial = f"{name}.{os.getpid()}.partial"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, json.dumps({"state": state, "digest": digest(state)}).encode())
    os.fsync(fd)
    os.close(fd)
    os.rename(partial, name)
    folder = os.open(CKPT, os.O_RDONLY)
    os.fsync(folder)
    os.close(folder)
    note("checkpoint", step=state["step"])


def main():
    noticed = []
    signal.signal(signal.SIGUSR1, lambda *_: noticed.append(1))
    env = os.environ
    rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
    note("start", rank=rank, local_rank=int(env["LOCAL_RANK"]), world=world,
         run_id=env.get("AML_LAUNCH_RUN_ID"), restart=int(env.get("TORCHELASTIC_RESTART_COUNT", 0)),
         master=f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}", node_rank=int(env["GROUP_RANK"]))
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=600))
    state, torn = newest_checkpoint()
    note("resume", step=state["step"], total=state["total"], torn=torn)
    expected_sum = world * (world + 1) // 2
    notice_file = env.get("AML_LAUNCH_NOTICE_FILE", "")
    step = state["step"]
    while True:
        told = 1.0 if noticed or (notice_file and os.path.exists(notice_file)) else 0.0
        t = torch.tensor([float((step + 1) * (rank + 1)), told], dtype=torch.float64)
        dist.all_reduce(t)
        result = int(t[0].item())
        ok = result == (step + 1) * expected_sum
        note("step", step=step + 1, result=result, ok=ok)
        if not ok:
            sys.exit(f"step {step + 1}: all_reduce gave {result}, expected {(step + 1) * expected_sum}")
        if t[1].item() > 0:
            # Every rank saw the notice at this step: the step is not counted, the state saved.
            if rank == 0:
                save(state)
            dist.barrier()
            note("exit", why="notice", step=state["step"])
            dist.destroy_process_group()
            return
        step += 1
        state = {"step": step, "total": state["total"] + step}
        if rank == 0 and step % EVERY == 0:
            save(state)
        time.sleep(STEP_S)


if __name__ == "__main__":
    main()
