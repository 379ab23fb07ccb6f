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
  2: "expected an etcd member that answers"). Then silent again as a spare: it comes back again
  (bug 7: the comeback was tried once, and the second silence exited 2).
- etcd: every launcher and worker paused at once past its lease: a round forms again.
- etcd, five hosts: the three seated launchers killed together, nobody left watching their wills
  (bug 6): the two spares end the round the dead never ended and form the next one (before, the
  spares were seated beside the dead, or waited for ever).
At the end the scheduler's SIGTERM stops every launcher as a stop (exit 143, its summary).

usage: /usr/bin/python3 tests/chaos/comeback_test.py AML_LAUNCH [c10d|etcd ...]   (as root)
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import (check, closing_line, formed, in_a_round, on_hosts, outcome,  # noqa: E402
                    seated_in, wait_until, waiting_since)

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
    silence(hosts, silent.host, how)
    back = time.time()
    check(f"etcd ({how}): the job goes on without host {silent.host}: the spare is seated",
          wait_until(lambda: seated_in(spare) is not None, NODE_TIMEOUT + 12), outcome(spare))
    check(f"etcd ({how}): host {silent.host}'s launcher, {how} for {SILENCE} s, waits for a "
          "seat again", wait_until(lambda: waiting_since(silent, back), 20) and silent.alive(),
          outcome(silent))
    time.sleep(2)
    check(f"etcd ({how}): ... and is still there", silent.alive(), outcome(silent))
    # Silent again while it waits for a seat (bug 7: the comeback was tried once).
    silence(hosts, silent.host, how)
    again = time.time()
    check(f"etcd ({how}): {how} again for {SILENCE} s before a seat, it comes back again and "
          "waits for a seat", wait_until(lambda: waiting_since(silent, again), 20)
          and silent.alive(), outcome(silent))
    time.sleep(2)
    check(f"etcd ({how}): ... and is still there", silent.alive(), outcome(silent))


def silence(hosts, host, how):
    """host paused (SIGSTOP) or cut off for SILENCE seconds, then continued or healed."""
    if how == "paused":
        hosts.signal_host(host, signal.SIGSTOP)
    else:
        hosts.cut_off(host)
    time.sleep(SILENCE)
    if how == "paused":
        hosts.signal_host(host, signal.SIGCONT)
    else:
        hosts.heal(host)


def all_paused(hosts, job):
    """etcd: every launcher and worker paused at once past its lease (etcd runs on), then
    continued: nobody watched the wills when the leases ended, so no "gone" key says that the
    old launchers left. Each comes back under a new lease, and a round forms of the launchers
    that are there, not of the numbers they had."""
    if not wait_until(lambda: formed(job), 90):
        check("etcd (all paused): the first round forms with three nodes and a spare", False)
        return
    before = job.live()
    paused = set()
    for _ in range(2):  # a process forked during the first pass is caught by the second
        for pid in hosts.pids():  # the launchers, workers and stand-ins; not the etcd members
            try:
                os.kill(pid, signal.SIGSTOP)
                paused.add(pid)
            except ProcessLookupError:
                pass
    time.sleep(SILENCE)
    for pid in paused:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    back = time.time()
    check(f"etcd (all paused): paused for {SILENCE} s, a round of three forms again within 40 s",
          wait_until(lambda: sum(seated_in(l, since=back) is not None for l in before) == 3
                     and formed(job), 40),
          "\n".join(outcome(l) for l in before))
    check("etcd (all paused): ... and every launcher is still there",
          all(l.alive() for l in before), "\n".join(outcome(l) for l in before if not l.alive()))


def members_all_killed(hosts, job):
    """etcd, five hosts: every seated launcher killed at once (their workers too), the two spares
    left. Nobody watched the wills when the members' leases ended (the members were the
    watchers): no word ended their round, and the spares waited for it for ever (bug 6's end
    state). The spares end it for them, and form the next round."""
    def seated_and_spares():
        live = job.live()
        seated = [l for l in live if in_a_round(l)]
        spares = [l for l in live if l not in seated and waiting_since(l, 0)]
        return (seated, spares) if len(seated) == 3 and len(spares) == 2 else None
    if not wait_until(seated_and_spares, 90):
        check("etcd (members killed): the first round forms with three nodes and two spares",
              False)
        return
    seated, spares = seated_and_spares()
    for _ in range(2):  # the launchers and their workers; the etcd members live on
        for member in seated:
            for pid in hosts.pids(member.host):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    killed = time.time()
    check(f"etcd (members killed): hosts {sorted(l.host for l in seated)}'s launchers killed "
          "together, the two spares form a round within --node-timeout + 20 s",
          wait_until(lambda: all(seated_in(l, since=killed) is not None for l in spares),
                     NODE_TIMEOUT + 20), "\n".join(outcome(l) for l in spares))


def main():
    if os.geteuid() != 0:
        sys.exit("comeback_test: run as root (network namespaces, nft)")
    bin_path = os.path.abspath(sys.argv[1])
    scenarios = {"c10d": [spare_cut_off],
                 "etcd": [lambda h, j: seated_silent(h, j, "paused"),
                          lambda h, j: seated_silent(h, j, "cut off"), all_paused,
                          members_all_killed]}
    for engine in sys.argv[2:] or ["c10d", "etcd"]:
        for scenario in scenarios[engine]:
            on_hosts(bin_path, engine, "comeback", 5 if scenario is members_all_killed else HOSTS,
                     scenario, nnodes="2:3", node_timeout=NODE_TIMEOUT, program=WORKER)
    return closing_line()


if __name__ == "__main__":
    sys.exit(main())
