#!/usr/bin/env python3
"""A spare that turns sick while it waits is never seated (the campaign's sick hosts "not
benched": benchmarks/RESULTS.md's track record, bug 12).

Four namespace hosts, --nnodes 2:3 (one spare), a light worker, --health-command failing while
the host's "sick" file exists, under each engine: the spare's host turns sick while it waits,
then a seated launcher is killed (its host's processes), so that the job needs the spare. A
spare said what it was (healthy) when it began to wait, and was seated on that word: it ran the
round sick. Now it reads its checks again where they are older than a few seconds, when it is
counted in a round and when it is given a seat: it is benched, and the round runs with the two
left (MIN). At the end the scheduler's SIGTERM stops every launcher as a stop.

usage: /usr/bin/python3 tests/chaos/sick_spare_test.py AML_LAUNCH [c10d|etcd ...]   (as root)
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import (check, closing_line, events, formed, on_hosts, outcome,  # noqa: E402
                    seated_in, wait_until)
from history import event_time  # noqa: E402

HOSTS = 4
NODE_TIMEOUT = 4
WORKER = ["/bin/sh", "-c", "while :; do sleep 0.2; done"]  # until a TERM ends it


def benched_since(launch, since):
    """Whether the launcher said, after `since`, that it is benched."""
    return any(row.get("kind") == "benched_waiting" and event_time(row) >= since
               for row in events(launch))


def spare_turns_sick(hosts, job):
    engine = job.engine
    if not wait_until(lambda: formed(job), 90):
        check(f"{engine}: the first round forms with three nodes and a spare", False)
        return
    spare, seated = formed(job)
    with open(job.sick_flag(spare.host), "w"):
        pass
    time.sleep(7)  # past the spare's last look at its checks
    victim = next(l for l in seated if l.host != 0)  # c10d: node 0's store is host 0's
    hosts.signal_host(victim.host, signal.SIGKILL)
    killed = time.time()
    others = [l for l in seated if l is not victim]
    check(f"{engine}: a seated launcher killed, the two left run a round without the sick spare "
          f"within --node-timeout + 25 s",
          wait_until(lambda: all(seated_in(l, since=killed) is not None for l in others) and
                     benched_since(spare, killed), NODE_TIMEOUT + 25),
          "\n".join(outcome(l) for l in others + [spare]))
    time.sleep(2)
    check(f"{engine}: ... the spare, sick, was never seated (host {spare.host})",
          seated_in(spare, since=killed) is None and spare.alive(), outcome(spare))
    check(f"{engine}: ... it says it is benched for its failed check",
          benched_since(spare, killed) and "failed its health check" in outcome(spare),
          outcome(spare))


def main():
    if os.geteuid() != 0:
        sys.exit("sick_spare_test: run as root (network namespaces, nft)")
    bin_path = os.path.abspath(sys.argv[1])
    for engine in sys.argv[2:] or ["c10d", "etcd"]:
        on_hosts(bin_path, engine, "sick-spare", HOSTS, spare_turns_sick, nnodes="2:3",
                 node_timeout=NODE_TIMEOUT, program=WORKER)
    return closing_line()


if __name__ == "__main__":
    sys.exit(main())
