#!/usr/bin/env python3
"""A round's news comes through while an etcd member is frozen.

The campaign's bug 3 (benchmarks/RESULTS.md's track record): a launcher's watch streams from one
etcd member, and a member that stops serving (paused, hung, cut off, without a leader) says
nothing more on it. A worker killed while a member was frozen ended the round on its own node
only: the launchers whose round watch was on the frozen member heard of it when the member came
back, 18 s later. Now a launcher asks its streams' member every third of the lease, and moves
its streams to another member where it does not answer.

Four namespace hosts, etcd's three members on hosts 0-2, --nnodes 2:3, --node-timeout 4, a light
worker. Each member in turn is frozen (SIGSTOP) and a seated worker killed: every seated
launcher must end its round within --node-timeout + 2 s, whichever member its streams were on
(each launcher's first member is its pid's turn: over the three turns some launcher's is the
frozen one); then the member thaws and the job runs again.

usage: /usr/bin/python3 tests/chaos/frozen_member_test.py AML_LAUNCH   (as root)
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, closing_line, formed, on_hosts, outcome, round_ended_since, wait_until  # noqa: E402

NODE_TIMEOUT = 4
BOUND = NODE_TIMEOUT + 2
WORKER = ["/bin/sh", "-c", "while :; do sleep 0.2; done"]  # until a TERM ends it


def worker_pids(hosts, host):
    return [pid for pid, env in hosts.pids(host).items() if b"RANK" in env]


def each_member_frozen(hosts, job):
    for member in (0, 1, 2):
        if not wait_until(lambda: formed(job), 60):
            check(f"member {member}: a round of three and a spare runs first", False,
                  "\n".join(outcome(l) for l in job.launches))
            return
        spare, seated = formed(job)
        victim = next((l for l in seated if worker_pids(hosts, l.host)), None)
        if victim is None:
            check(f"member {member}: a seated worker to kill", False)
            return
        hosts.etcd_signal(member, signal.SIGSTOP)
        time.sleep(1)
        killed = time.time()
        for pid in worker_pids(hosts, victim.host):
            os.kill(pid, signal.SIGKILL)
        heard = wait_until(lambda: all(round_ended_since(l, killed) for l in seated), BOUND + 4)
        took = {l.host: (round((round_ended_since(l, killed) or 0) - killed, 2)
                         if round_ended_since(l, killed) else None) for l in seated}
        hosts.etcd_signal(member, signal.SIGCONT)
        check(f"member {member} frozen, host {victim.host}'s worker killed: every seated launcher "
              f"ended its round within {BOUND} s: {took}",
              heard and all(t is not None and t <= BOUND for t in took.values()),
              "\n".join(outcome(l) for l in seated))
        # The job runs again (a round of three and the spare) before the next member's turn.
        time.sleep(2)


def main():
    if os.geteuid() != 0:
        sys.exit("frozen_member_test: run as root (network namespaces)")
    on_hosts(os.path.abspath(sys.argv[1]), "etcd", "frozen", 4, each_member_frozen,
             nnodes="2:3", node_timeout=NODE_TIMEOUT, program=WORKER)
    return closing_line()


if __name__ == "__main__":
    sys.exit(main())
