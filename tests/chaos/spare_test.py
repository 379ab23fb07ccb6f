#!/usr/bin/env python3
"""What a hot spare knows while it waits: its own health, and the job's end (the campaign's bugs
12 and 13: benchmarks/RESULTS.md's track record).

Four namespace hosts, --nnodes 2:3 (one spare), a light worker, --health-command failing while
the host's "sick" file exists, under each engine:
- the spare's host turns sick while it waits, then a seated launcher is killed (its host's
  processes), so that the job needs the spare. A spare said what it was (healthy) when it began
  to wait, and was seated on that word: it ran the round sick. Now it reads its checks again
  where they are older than a few seconds, when it is counted in a round and when it is given a
  seat: it is benched, and the round runs with the two left (MIN).
- a Preempt notice on a seated host ends the job (200) while the spare waits. The spare's
  summary said exit 200 with no notice and no first failure (its words said them, from node
  0's): the job's summaries disagreed (invariant 4). Now every summary names the same notice
  and the same first failure.
- c10d: node 0's store's host turns sick while it waits alone for members; one comes: the round
  runs with both (it gives the seats; its checks are read as it begins a round).
At the end the scheduler's SIGTERM stops every launcher as a stop.

usage: /usr/bin/python3 tests/chaos/spare_test.py AML_LAUNCH [c10d|etcd ...]   (as root)
"""
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import (check, closing_line, events, formed, in_a_round, on_hosts,  # noqa: E402
                    outcome, seated_in, wait_until)
from history import event_time  # noqa: E402

HOSTS = 4
NODE_TIMEOUT = 4
WORKER = ["/bin/sh", "-c", "while :; do sleep 0.2; done"]  # until a TERM ends it


def benched_since(launch, since):
    """Whether the launcher said, after `since`, that it is benched."""
    return any(row.get("kind") == "benched_waiting" and event_time(row) >= since
               for row in events(launch))


def first_round(job, case):
    """(the spare, the seated launchers) once the first round runs, or None (said)."""
    if not wait_until(lambda: formed(job), 90):
        check(f"{case}: the first round forms with three nodes and a spare", False)
        return None
    return formed(job)


def spare_turns_sick(hosts, job):
    engine = job.engine
    if (first := first_round(job, engine)) is None:
        return
    spare, seated = first
    sick_at = time.time()
    with open(job.sick_flag(spare.host), "w"):
        pass
    time.sleep(7)  # past the spare's last look at its checks
    victim = next(l for l in seated if l.host != 0)  # c10d: node 0's store is host 0's
    hosts.signal_host(victim.host, signal.SIGKILL)
    killed = time.time()
    others = [l for l in seated if l is not victim]
    check(f"{engine}: a seated launcher killed, the two left run a round without the sick spare "
          f"within --node-timeout + 25 s",
          # Benched by the round's giver after the kill, or by its own look at its checks
          # before it (a look due in the 7 s, late on a loaded machine): either way since sick.
          wait_until(lambda: all(seated_in(l, since=killed) is not None for l in others) and
                     benched_since(spare, sick_at), NODE_TIMEOUT + 25),
          "\n".join(outcome(l) for l in others + [spare]))
    time.sleep(2)
    check(f"{engine}: ... the spare, sick, was never seated (host {spare.host})",
          seated_in(spare, since=killed) is None and spare.alive(), outcome(spare))
    check(f"{engine}: ... it says it is benched for its failed check",
          benched_since(spare, sick_at) and "failed its health check" in outcome(spare),
          outcome(spare))


def store_host_turns_sick(hosts, job):
    """c10d: node 0's store's host turns sick while it waits alone for a round's members, then a
    launcher comes: the round runs. (Bug 12's first fix read the host's checks again after it
    gave the seats: it benched itself as a spare would, and nobody gave the next round's seats;
    every launcher waited "round 3 runs" until the end, a campaign's last 7 minutes.)"""
    if first_round(job, "c10d (store's host sick)") is None:
        return
    store_host = next(l for l in job.live() if l.host == 0)
    killed = time.time()
    for host in (1, 2, 3):
        hosts.signal_host(host, signal.SIGKILL)
    # Healthy as it begins the next round (its checks read then), sick while it waits in it.
    check("c10d (store's host sick): the others killed, node 0's store's host waits for a round",
          wait_until(lambda: any(row.get("kind") == "rendezvous_begun" and
                                 event_time(row) >= killed for row in events(store_host)), 30),
          outcome(store_host))
    time.sleep(1)
    with open(job.sick_flag(0), "w"):
        pass
    time.sleep(7)  # past the store's host's last look at its checks, while it waits alone
    came = job.start(3)  # the spare's machine: not benched (a seated one lost is)
    started = time.time()
    check("c10d (store's host sick): a launcher that comes is seated and runs a round with it "
          "within 30 s", wait_until(lambda: in_a_round(came), 30),
          outcome(came) + "\n" + outcome(store_host))
    check("c10d (store's host sick): ... and none has exited",
          all(l.alive() for l in job.live() + [came]) and time.time() - started < 60,
          outcome(came))


def summary_of(launch):
    try:
        with open(launch.files["summary"]) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def notice_ends_while_spare_waits(hosts, job):
    engine = job.engine
    if (first := first_round(job, f"{engine} (notice)")) is None:
        return
    spare, seated = first
    launchers = seated + [spare]
    open(job.notice_flag(seated[-1].host), "w").close()
    ended = wait_until(lambda: not any(l.alive() for l in launchers), 90)
    codes = {l.host: l.proc.returncode for l in launchers}
    check(f"{engine} (notice): a notice on host {seated[-1].host} ends the job, every launcher "
          f"200, the spare's too: {codes}", ended and set(codes.values()) == {200},
          "\n".join(outcome(l) for l in launchers))
    told = {l.host: (json.dumps((summary_of(l).get("notice") or {}).get("event_id")),
                     json.dumps(summary_of(l).get("first_failure"), sort_keys=True))
            for l in launchers}
    check(f"{engine} (notice): ... every summary names the same notice and first failure, the "
          f"waiting spare's (host {spare.host}) too",
          len(set(told.values())) == 1 and told[spare.host][0] != "null",
          json.dumps(told, indent=1))
    # The scheduler's retry: the job again, for the final SIGTERM.
    for path in os.listdir(f"{job.work}/flags"):
        os.unlink(f"{job.work}/flags/{path}")
    job.start_incarnation()
    check(f"{engine} (notice): the job queued again forms its round",
          wait_until(lambda: formed(job), 90))


def main():
    if os.geteuid() != 0:
        sys.exit("spare_test: run as root (network namespaces, nft)")
    bin_path = os.path.abspath(sys.argv[1])
    for engine in sys.argv[2:] or ["c10d", "etcd"]:
        scenarios = [spare_turns_sick, notice_ends_while_spare_waits]
        if engine == "c10d":  # node 0's store's host gives every round's seats
            scenarios.append(store_host_turns_sick)
        for scenario in scenarios:
            on_hosts(bin_path, engine, "spare", HOSTS, scenario, nnodes="2:3",
                     node_timeout=NODE_TIMEOUT, program=WORKER)
    return closing_line()


if __name__ == "__main__":
    sys.exit(main())
