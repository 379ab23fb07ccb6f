#!/usr/bin/env python3
"""A launcher silent past --node-timeout comes back and waits for a seat; it does not leave the job.

The campaign's bugs 2 and 4 (benchmarks/RESULTS.md's track record), each alone on four namespace
hosts and a light worker (no torch), --nnodes 2:3 (one spare), --node-timeout 4:
- node 0's store (c10d): the hot spare's host cut off for 8 s. The store counts it gone; once
  healed it is a spare again (it exited 2, "node 0's store went away while this node waited"),
  and it takes the seat of a launcher killed after.
- etcd, three members on hosts 0-2: a seated host paused for 8 s, then one cut off for 8 s. Its
  lease ends and the job goes on with the spare; once back it waits for a seat again under a new
  lease (paused, it exited 2: "etcd lease: expected a live lease; it expired"; cut off, it exited
  2: "expected an etcd member that answers").
At the end the scheduler's SIGTERM stops every launcher as a stop (exit 143, its summary).

usage: /usr/bin/python3 tests/chaos/comeback_test.py AML_LAUNCH [c10d|etcd ...]   (as root)
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import (check, closing_line, formed, on_hosts, outcome, seated_in,  # noqa: E402
                    wait_until, waiting_since)

HOSTS = 4
NODE_TIMEOUT = 4
SILENCE = NODE_TIMEOUT + 4
WORKER = ["/bin/sh", "-c", "while :; do sleep 0.2; done"]  # until a TERM ends it

def spare_cut_off(hosts, job):
    """c10d: the hot spare's host cut off past --node-timeout, then healed."""
    if not wait_until(lambda: formed(job), 60):
        check("c10d: the first round forms with three nodes and a spare", False)
        return
    spare, seated = formed(job)
    hosts.cut_off(spare.host)
    time.sleep(SILENCE)
    hosts.heal(spare.host)
    healed = time.time()
    time.sleep(3)
    check(f"c10d: the spare (host {spare.host}) cut off for {SILENCE} s is still there 3 s after "
          "healing", spare.alive(), outcome(spare))
    # A seated launcher killed: the spare takes its seat (node 0's store is host 0's).
    victim = next(l for l in seated if l.host != 0)
    victim.proc.kill()
    hosts.signal_host(victim.host, signal.SIGKILL)
    check(f"c10d: ... and is seated once host {victim.host}'s launcher is killed",
          wait_until(lambda: seated_in(spare, since=healed) is not None,
                     NODE_TIMEOUT + 12), outcome(spare))


def seated_silent(hosts, job, how):
    """etcd: a seated host paused (SIGSTOP) or cut off past its lease, then continued or healed:
    it comes back and waits for a seat."""
    if not wait_until(lambda: formed(job), 90):
        check(f"etcd ({how}): the first round forms with three nodes and a spare", False)
        return
    spare, seated = formed(job)
    silent = max(seated, key=lambda l: l.host)  # host 3 where it is seated: no etcd member
    if how == "paused":
        hosts.signal_host(silent.host, signal.SIGSTOP)
    else:
        hosts.cut_off(silent.host)
    time.sleep(SILENCE)
    if how == "paused":
        hosts.signal_host(silent.host, signal.SIGCONT)
    else:
        hosts.heal(silent.host)
    back = time.time()
    check(f"etcd ({how}): the job goes on without host {silent.host}: the spare is seated",
          wait_until(lambda: seated_in(spare) is not None, NODE_TIMEOUT + 12), outcome(spare))
    check(f"etcd ({how}): host {silent.host}'s launcher, {how} for {SILENCE} s, waits for a "
          "seat again", wait_until(lambda: waiting_since(silent, back), 20) and silent.alive(),
          outcome(silent))
    time.sleep(2)
    check(f"etcd ({how}): ... and is still there", silent.alive(), outcome(silent))


def main():
    if os.geteuid() != 0:
        sys.exit("comeback_test: run as root (network namespaces, nft)")
    bin_path = os.path.abspath(sys.argv[1])
    scenarios = {"c10d": [spare_cut_off],
                 "etcd": [lambda h, j: seated_silent(h, j, "paused"),
                          lambda h, j: seated_silent(h, j, "cut off")]}
    for engine in sys.argv[2:] or ["c10d", "etcd"]:
        for scenario in scenarios[engine]:
            on_hosts(bin_path, engine, "comeback", HOSTS, scenario, nnodes="2:3",
                     node_timeout=NODE_TIMEOUT, program=WORKER)
    return closing_line()


if __name__ == "__main__":
    sys.exit(main())
