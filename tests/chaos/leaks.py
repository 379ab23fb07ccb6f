"""Invariant 5, nothing leaks: after the campaign no process, namespace, temporary file or etcd data
of it is left; over the campaign every launcher's descriptors and resident memory stay flat.
"""
import json
from collections import Counter
import os
import re
import subprocess


def netns():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def snapshot():
    return {"tmp": set(os.listdir("/tmp")), "shm": set(os.listdir("/dev/shm")), "netns": netns()}


# What others beside the campaign make in /tmp, theirs to clean: a compiler's temporary files
# (gcc's ccXXXXXX.s: the suite's release build goes on beside the campaigns), and the folders
# of another campaign or chaos test running at the same time (its history, its cluster's hosts
# files: aml-netns-NET, NET its own; its etcd members' data in /dev/shm).
OTHERS_OWN = re.compile(
    r"cc[A-Za-z0-9]{6}\.[a-z]{1,3}$|aml-(chaos|comeback)-|aml-netns-(ch|cb)[0-9]+$|aml-etcd\.")


def check(before, hosts, work, keep):
    """After hosts.down(): what of the campaign is left (its marked processes, its namespaces,
    new entries in /tmp and /dev/shm)."""
    net = hosts.net
    after = snapshot()
    keep_name = os.path.basename(work) if keep else None
    own = {f"aml-netns-{net}", os.path.basename(work)}
    left = {
        "processes": sorted(hosts.pids()),
        "namespaces": sorted(n for n in after["netns"] - before["netns"] if n.startswith(net)),
        "tmp": sorted(n for n in after["tmp"] - before["tmp"] if n != keep_name and
                      (n in own or not OTHERS_OWN.match(n))),
        "shm": sorted(n for n in after["shm"] - before["shm"]
                      if n in hosts.etcd_data or not OTHERS_OWN.match(n)),
    }
    found = {k: v for k, v in left.items() if v}
    return {"invariant": "5a. nothing left behind", "held": not found,
            "detail": "no process, namespace, /tmp or /dev/shm entry left" if not found
            else f"left: {json.dumps(found)}", "lines": []}


STATE_SETTLE_S = 3.0


def growth(samples_path, faults_fired, busy=(), role="launcher", settle_s=20.0):
    """Each long-lived process's growth of descriptors and resident memory (KiB) over the
    campaign, from the sampled process table: its first samples (after settle_s of its life)
    against its last (memory by the median, descriptors below), in the state it spent most samples in (a
    launcher seated, with a worker on its host, holds more descriptors than a spare: its
    workers' pipes; the round's node 0 serves its workers a store; node 0's store's host holds a
    connection of every launcher and worker: the state is the launcher's seat, whether its host
    runs rank 0, and how many launchers and workers live), and the faults that fired between. Samples
    within `busy` (intervals: a flood's strangers hold hundreds of connections) are left out."""
    lives = {}
    with open(samples_path) as f:
        for line in f:
            row = json.loads(line)
            if any(a <= row["t"] <= b for a, b in busy):
                continue
            live = [p for p in row["p"] if p[3] != "Z"]
            seated_hosts = {p[1] for p in live if p[2] == "worker"}
            # The round's node 0 (its worker holds rank 0) serves the workers' store: a listening
            # socket, an epoll, an eventfd and a connection a worker more than another member.
            node0_hosts = {p[1] for p in live if p[2] == "worker" and p[6] == 0}
            # What a launcher's descriptors follow: whether it is seated, and how many launchers
            # and workers there are (node 0 holds a connection of each).
            counts = (sum(p[2] == "launcher" for p in live), sum(p[2] == "worker" for p in live))
            for pid, host, r, state, rss, fds, *rest in live:
                if r == role:
                    kinds = rest[2] if len(rest) > 2 and rest[2] else {}
                    state = (host in seated_hosts, host in node0_hosts) + counts
                    lives.setdefault(pid, []).append((row["t"], rss, fds, host, state, kinds))
    out = []
    for pid, seen in lives.items():
        born = seen[0][0]
        # The first seconds of each seat left out too: a round's members and workers connect to
        # its node 0 one by one as it begins, and a window of short rounds would catch only that.
        settled, entered, seat_before = [], None, None
        for s in seen:
            if s[4][:2] != seat_before:  # its seat, and whether it is the round's node 0
                entered, seat_before = s[0], s[4][:2]
            if s[0] - born >= settle_s and s[0] - entered >= STATE_SETTLE_S:
                settled.append(s)
        seen = settled
        states = {}
        for s in seen:
            states.setdefault(s[4], []).append(s)
        if not states:
            continue
        seen = max(states.values(), key=len)
        if len(seen) < 20:
            continue
        k = max(5, len(seen) // 5)
        first, last = seen[:k], seen[-k:]
        faults = sum(1 for t in faults_fired if first[-1][0] <= t <= last[0][0])
        med = lambda rows, i: sorted(r[i] for r in rows)[len(rows) // 2]  # noqa: E731
        # Descriptors by the least of three growths, the median's, the most held's and the
        # floor's: node 0's store holds a waiting launcher's connection until its answer, one cut
        # off and killed lingers until then (its FIN dropped), and a round's members and workers
        # connect one by one as it begins (short rounds put many such moments in a window), so
        # each alone moves with the moments a window caught; a leak raises all three.
        def grown(value):
            median = lambda rows: sorted(map(value, rows))[len(rows) // 2]  # noqa: E731
            # The most held (the plateau a round settles at; the larger where two tie).
            mode = lambda rows: max(Counter(map(value, rows)).items(),  # noqa: E731
                                    key=lambda kv: (kv[1], kv[0]))[0]
            return min(median(last) - median(first), mode(last) - mode(first),
                       min(map(value, last)) - min(map(value, first)))
        # Which kinds of descriptor grew (sockets, pipes, eventfds...): where to look for a leak.
        kinds = {k for r in first + last for k in r[5]}
        grew = {k: grown(lambda r, k=k: r[5].get(k, 0)) for k in sorted(kinds)}
        out.append({"pid": pid, "host": seen[0][3], "seated": seen[0][4][0],
                    "seconds": round(seen[-1][0] - seen[0][0]), "faults": faults,
                    "fds": grown(lambda r: r[2]), "rss_kib": med(last, 1) - med(first, 1),
                    "kinds": {k: d for k, d in grew.items() if d}})
    return out
