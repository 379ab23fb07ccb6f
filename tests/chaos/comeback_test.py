#!/usr/bin/env python3
"""A launcher silent past --node-timeout comes back and waits for a seat; it does not leave the job.

The campaign's bugs 2 and 4 (benchmarks/RESULTS.md's track record), each alone on four namespace
hosts and a light worker (no torch), --nnodes 2:3 (one spare), --node-timeout 4:
- node 0's store (c10d): the hot spare's host cut off for 8 s. The store counts it gone; once
  healed it is a spare again (it exited 2, "node 0's store went away while this node waited"),
  and it takes the seat of a launcher killed after. Then the spare paused as a seated launcher is
  killed: it is given the seat and never comes; the round forms again without it (bug 8: every
  launcher ended, exit 2).
- etcd, three members on hosts 0-2: a seated host paused for 8 s, then one cut off for 8 s. Its
  lease ends and the job goes on with the spare; once back it waits for a seat again under a new
  lease (paused, it exited 2: "etcd lease: expected a live lease; it expired"; cut off, it exited
  2: "expected an etcd member that answers"). Waiting, it holds what the spare held: the round
  it left let go (its epoll and watches were held while it waited: the campaign's invariant 5b).
  Then silent again as a spare: it comes back again (bug 7: the comeback was tried once, and the
  second silence exited 2).
- etcd: every launcher and worker paused at once past its lease: a round forms again.
- etcd, five hosts: the three seated launchers killed together, nobody left watching their wills
  (bug 6): the two spares end the round the dead never ended and form the next one (before, the
  spares were seated beside the dead, or waited for ever).
At the end the scheduler's SIGTERM stops every launcher as a stop (exit 143, its summary).

usage: /usr/bin/python3 tests/chaos/comeback_test.py AML_LAUNCH [c10d|etcd ...]   (as root)
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import (check, closing_line, events, formed, in_a_round, on_hosts,  # noqa: E402
                    outcome, seated_in, wait_until, waiting_since)
from history import descriptor_kinds, event_time  # noqa: E402

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


def seated_while_paused(hosts, job):
    """c10d: the spare paused, and a seated launcher killed at once: the spare is given the seat
    and never comes. The round is formed again without it (bug 8: every launcher ended, exit 2,
    "expected every node seated in it to join within --node-timeout"), and the spare, continued,
    is a spare again."""
    if not wait_until(lambda: formed(job), 60):
        check("c10d (seated while paused): the first round forms with three nodes and a spare",
              False)
        return
    spare, seated = formed(job)
    hosts.signal_host(spare.host, signal.SIGSTOP)
    victim = next(l for l in seated if l.host != 0)  # node 0's store is host 0's
    hosts.signal_host(victim.host, signal.SIGKILL)
    killed = time.time()
    others = [l for l in seated if l is not victim]
    check("c10d (seated while paused): the round is formed again without the paused spare "
          f"within --node-timeout + 20 s",
          wait_until(lambda: all(round_formed_since(l, killed) >= 1 for l in others),
                     NODE_TIMEOUT + 20) and all(l.alive() for l in others),
          "\n".join(outcome(l) for l in others))
    back = time.time()  # before: the spare may say so as soon as it runs
    hosts.signal_host(spare.host, signal.SIGCONT)
    check("c10d (seated while paused): the spare, continued, waits for a seat again",
          wait_until(lambda: waiting_since(spare, back), 20) and spare.alive(), outcome(spare))


def round_formed_since(launch, since):
    """How many rounds the launcher saw formed (seated or not) after `since`."""
    return sum(1 for row in events(launch)
               if row.get("kind") == "rendezvous_formed" and event_time(row) >= since)


def seated_silent(hosts, job, how):
    """etcd: a seated host paused (SIGSTOP) or cut off past its lease, then continued or healed:
    it comes back and waits for a seat."""
    if not wait_until(lambda: formed(job), 90):
        check(f"etcd ({how}): the first round forms with three nodes and a spare", False)
        return
    spare, seated = formed(job)
    silent = max(seated, key=lambda l: l.host)  # host 3 where it is seated: no etcd member
    spare_holds = held(hosts, job, spare.host)
    silence(hosts, silent.host, how)
    back = time.time()
    check(f"etcd ({how}): the job goes on without host {silent.host}: the spare is seated",
          wait_until(lambda: seated_in(spare) is not None, NODE_TIMEOUT + 12), outcome(spare))
    check(f"etcd ({how}): host {silent.host}'s launcher, {how} for {SILENCE} s, waits for a "
          "seat again", wait_until(lambda: waiting_since(silent, back), 20) and silent.alive(),
          outcome(silent))
    time.sleep(2)
    check(f"etcd ({how}): ... and is still there", silent.alive(), outcome(silent))
    # What the round it left held is gone (its watches, its tripwire, a store it served): it
    # holds what a spare holds (before, a launcher that lost its seat grew by a round's worth at
    # each, the campaign's invariant 5b).
    holds = held(hosts, job, silent.host)
    check(f"etcd ({how}): ... holding no more epolls, eventfds and listening sockets than the "
          "spare did", holds is not None and spare_holds is not None and
          all(holds[0].get(k, 0) <= spare_holds[0].get(k, 0) for k in ("eventpoll", "eventfd"))
          and len(holds[1]) <= len(spare_holds[1]),
          f"it holds {holds}; the spare held {spare_holds}")
    # Silent again while it waits for a seat (bug 7: the comeback was tried once).
    silence(hosts, silent.host, how)
    again = time.time()
    check(f"etcd ({how}): {how} again for {SILENCE} s before a seat, it comes back again and "
          "waits for a seat", wait_until(lambda: waiting_since(silent, again), 20)
          and silent.alive(), outcome(silent))
    time.sleep(2)
    check(f"etcd ({how}): ... and is still there", silent.alive(), outcome(silent))


def held(hosts, job, host):
    """({descriptor kind: count}, [listening TCP ports]) of host's launcher, or None. Of the
    launcher's two processes, the one that runs the job (its guardian holds a few)."""
    launchers = []
    for pid in hosts.pids(host):
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(job.bin):
                launchers.append((sum(descriptor_kinds(pid).values()), pid))
        except OSError:
            continue
    for _, pid in sorted(launchers)[-1:]:
        sockets = set()
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            if target.startswith("socket:["):
                sockets.add(target[len("socket:["):-1])
        listening = []
        for table in ("tcp", "tcp6"):
            with open(f"/proc/{pid}/net/{table}") as f:
                for line in list(f)[1:]:
                    fields = line.split()
                    if fields[3] == "0A" and fields[9] in sockets:  # LISTEN, its own
                        listening.append(int(fields[1].rsplit(":", 1)[1], 16))
        return descriptor_kinds(pid), listening
    return None


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
                     NODE_TIMEOUT + 20),
          # The killed members' last words too: one that lived to end the job for the spares.
          "\n".join([outcome(l) for l in spares] +
                    [f"killed: {outcome(l)}" for l in seated]))


def seats_half_given(hosts, job):
    """etcd: whoever gives a round's seats lost between its node 0's place (that round starts at
    once) and the others' (a failpoint kills it there). Before, a launcher that took over gave
    the round's seats again: the round ran twice, its node 0 twice ("NODE_RANK=0: expected a
    node rank of its own"), or its members never came (bug 9). Now the one that takes over tells
    the rest as they were given. Workers are killed until a round's giver is not its node 0."""
    fired = job.env["AML_LAUNCH_TEST_FAILPOINT"].split(":", 1)[1]
    if not wait_until(lambda: formed(job), 90):
        check("etcd (seats half given): the first round forms with three nodes and a spare",
              False)
        return
    tried = []  # (host, pid) of each worker killed
    for _ in range(10):
        if os.path.exists(fired):
            break
        # A seated launcher other than host 0's with its worker running: just after a round
        # forms its worker may not be spawned yet (under load), so it is waited for.
        found = []

        def victim_found():
            seated = [l for l in job.live() if in_a_round(l) and l.host != 0]
            found[:] = [(l, w) for l in seated for w in [worker_of(hosts, l.host)] if w]
            return bool(found)

        if not wait_until(victim_found, 30):
            break
        victim, worker = found[0]
        ended = time.time()
        os.kill(worker, signal.SIGKILL)
        tried.append((victim.host, worker))
        wait_until(lambda: os.path.exists(fired) or
                   sum(round_formed_since(l, ended) > 0 for l in job.live()) >= 3, 30)
    check("etcd (seats half given): a round's giver was lost between node 0's place and the "
          "others'", os.path.exists(fired),
          f"workers killed (host, pid): {tried}\n" + "\n".join(outcome(l) for l in job.live()))
    if not os.path.exists(fired):
        return
    # From the failpoint's firing, not from when this looked: under load the round that
    # follows may have formed between the two.
    lost = os.path.getmtime(fired)
    live = job.live()
    check(f"etcd (seats half given): the {len(live)} launchers left form a round within "
          f"--node-timeout + 25 s, none exits",
          wait_until(lambda: sum(seated_in(l, since=lost) is not None for l in live) >= 2 and
                     all(l.alive() for l in live), NODE_TIMEOUT + 25)
          and all(l.alive() for l in live), "\n".join(outcome(l) for l in live))


def worker_of(hosts, host):
    """The pid of a worker on host (the launcher's child running the job's program), or None."""
    for pid in hosts.pids(host):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().split(b"\0")[:2] == [b"/bin/sh", b"-c"]:  # not its launcher's line
                    return pid
        except OSError:
            pass
    return None


def main():
    if os.geteuid() != 0:
        sys.exit("comeback_test: run as root (network namespaces, nft)")
    bin_path = os.path.abspath(sys.argv[1])
    scenarios = {"c10d": [spare_cut_off, seated_while_paused],
                 "etcd": [lambda h, j: seated_silent(h, j, "paused"),
                          lambda h, j: seated_silent(h, j, "cut off"), all_paused,
                          members_all_killed]}
    for engine in sys.argv[2:] or ["c10d", "etcd"]:
        for scenario in scenarios[engine]:
            on_hosts(bin_path, engine, "comeback", 5 if scenario is members_all_killed else HOSTS,
                     scenario, nnodes="2:3", node_timeout=NODE_TIMEOUT, program=WORKER)
    if "etcd" in (sys.argv[2:] or ["etcd"]):
        # The failpoint's file: in a folder of the test's own, removed after.
        once = tempfile.mkdtemp(prefix="aml-comeback-failpoint-")
        try:
            on_hosts(bin_path, "etcd", "comeback", HOSTS, seats_half_given, nnodes="2:3",
                     node_timeout=NODE_TIMEOUT, program=WORKER,
                     env={"AML_LAUNCH_TEST_FAILPOINT": f"seats-half-given:{once}/fired"})
        finally:
            subprocess.run(["rm", "-rf", once])
    return closing_line()


if __name__ == "__main__":
    sys.exit(main())
