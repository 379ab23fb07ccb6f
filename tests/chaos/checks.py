"""What the chaos regression tests share: their checks and the count they close with, and what
they read of a launcher's events and output."""
import json
import os
import subprocess
import tempfile
import time

import leaks
from history import event_time, read_jsonl
from hosts import Hosts
from job import Job

counts = {"passed": 0, "failed": 0}


def check(what, ok, detail=""):
    counts["passed" if ok else "failed"] += 1
    print(("ok: " if ok else "FAILED: ") + what + (f"\n  {detail}" if detail and not ok else ""),
          flush=True)


def closing_line():
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    return 1 if counts["failed"] else 0


def events(launch):
    return read_jsonl(launch.files["events"])


def seated_in(launch, since=0.0):
    """The node rank of the newest round this launcher was seated in after `since`, or None."""
    rank = None
    for row in events(launch):
        if row.get("kind") == "rendezvous_formed" and row.get("node_rank", -1) >= 0:
            if event_time(row) >= since:
                rank = row["node_rank"]
    return rank


def waiting_since(launch, since):
    """Whether the launcher said, after `since`, that it waits for a seat (a spare, or benched)."""
    return any(row.get("kind") in ("spare_waiting", "benched_waiting") and event_time(row) >= since
               for row in events(launch))


def round_ended_since(launch, since):
    """When the launcher ended a round after `since` (seconds since the epoch), or None."""
    for row in events(launch):
        if row.get("kind") == "round_ended" and event_time(row) >= since:
            return event_time(row)
    return None


def wait_until(predicate, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def in_a_round(launch):
    """Whether the launcher's newest round began and has not ended (its workers run)."""
    now_in = False
    for row in events(launch):
        if row.get("kind") == "round_started":
            now_in = True
        elif row.get("kind") in ("round_ended", "end"):
            now_in = False
    return now_in


def formed(job, seated_count=3):
    """(the spare, the seated launchers) once a round runs with seated_count nodes and the one
    launcher left waits for a seat."""
    live = job.live()
    seated = [l for l in live if in_a_round(l)]
    spares = [l for l in live if l not in seated and waiting_since(l, 0)]
    if len(seated) == seated_count and len(spares) == len(live) - seated_count == 1:
        return spares[0], seated
    return None


def outcome(launch):
    with open(launch.files["out"], errors="replace") as f:
        out = f.read()
    return f"exit {launch.proc.returncode}; its output ends:\n" + out[-1500:]


def stopped_at_the_end(job, engine):
    """The scheduler's SIGTERM to every live launcher: each ends as a stop (143, its summary)."""
    live = job.live()
    job.stop(timeout=30)
    codes = {l.number: l.proc.returncode for l in live}
    check(f"{engine}: the final SIGTERM stops every launcher as a stop (143): {codes}",
          live and all(c == 143 for c in codes.values()),
          "\n".join(outcome(l) for l in live if l.proc.returncode != 143))
    for l in live:
        try:
            with open(l.files["summary"]) as f:
                summary = json.load(f)
        except (OSError, ValueError) as e:
            summary = {"error": str(e)}
        check(f"{engine}: launcher {l.number} (host {l.host}) wrote its summary, a stop",
              summary.get("exit_code") == 143,
              json.dumps(summary)[:400] + ("" if "exit_code" in summary else
                                           "\n" + outcome(l) + "\n" + last_events(l)))


def last_events(launch, count=6):
    """A launcher's last events, kinds and times: where it was when it ended."""
    try:
        with open(launch.files["events"], errors="replace") as f:
            lines = f.read().splitlines()[-count:]
    except OSError as e:
        return f"its events: {e}"
    return "its last events:\n" + "\n".join(line[:300] for line in lines)


def on_hosts(bin_path, engine, name, count, scenario, **job_args):
    """scenario(hosts, job) against a job on `count` namespace hosts (etcd: three members on
    hosts 0-2), then the final SIGTERM, and nothing of it left behind."""
    before = leaks.snapshot()
    net = f"cb{os.getpid() % 100000}"
    work = tempfile.mkdtemp(prefix=f"aml-comeback-{name}-{engine}-")
    os.chmod(work, 0o755)
    hosts = Hosts(net, count, work)
    job = Job(hosts, work, bin_path, engine, **job_args)
    try:
        hosts.up()
        if engine == "etcd":
            hosts.etcd_up((0, 1, 2))
        job.start_incarnation()
        scenario(hosts, job)
        stopped_at_the_end(job, engine)
    finally:
        job.stop(timeout=20)
        hosts.down()
    subprocess.run(["rm", "-rf", work])
    left = leaks.check(before, hosts, work, keep=False)
    check(f"{engine}: nothing left behind", left["held"], left["detail"])
