"""Invariant 3, bounded effects: each fault's seen effect, from the launchers' events, set beside
what the docs say it does, with its recovery time (from the fault to the first step of a round
that started after it).

A fault is judged unless another that overlaps its window could change what it is judged by: a
fault that must not end the round, beside one that ends it; a fault that must bring a new round,
beside a notice or two other hosts away or sick (too few nodes for one); a pause, a cut or a
sickness, beside another fault that takes the same host away (or, under node 0's store, its
host: the store counts silence from its own return); a fault that must bring a new round,
beside a waiting launcher paused or cut off (it may be seated, and awaited); any fault
while etcd is without a quorum (two members away at once: killed, paused or cut off) for
--node-timeout, or at all where it needs etcd to act (a new round, a loss heard); any fault
within --node-timeout of the job queued again (its first round still forming) or whose window
the campaign's final SIGTERM ends.
Such a fault's effect is recorded as "overlapped", not judged: two faults together may rightly do
what neither does alone, and the invariants (invariants.py) hold for them all the same. A fault
that must end no round is judged by the rounds that ended in its window, not by one that formed
then (it may have been forming since an earlier fault).
"""
from history import event_time


class Timeline:
    """The launchers' events in time order, with each launcher's host."""

    def __init__(self, history):
        self.rows = []
        for number, (host, rows) in history.events().items():
            for row in rows:
                if "time" in row:
                    self.rows.append((event_time(row), host, number, row))
        self.rows.sort(key=lambda r: r[0])
        self.starts = sorted((r["t"], key) for key, rows in history.worker_logs().items()
                             for r in rows if r.get("ev") == "start")
        self.steps = sorted((r["t"], key) for key, rows in history.worker_logs().items()
                            for r in rows if r.get("ev") == "step")
        self.first_line = {key: rows[0]["t"] for key, rows in history.worker_logs().items() if rows}

    def kinds(self, kind, after, before, host=None):
        return [r for r in self.rows if r[3].get("kind") == kind and after <= r[0] <= before
                and (host is None or r[1] == host)]

    def lost(self, host, after, before):
        """Events saying that host's launcher was lost: node_lost, or a round that ended for its
        loss (one formed again without a member that never came says so in round_ended)."""
        def says_lost(row):
            details = row.get("details") or {}
            if row.get("kind") == "node_lost":
                return details.get("host") == f"chaos{host}"
            failure = details.get("first_failure") or {} if row.get("kind") == "round_ended" else {}
            return failure.get("host") == f"chaos{host}" and \
                "its launcher was lost" in str(failure.get("status"))
        return [r for r in self.rows if after <= r[0] <= before and says_lost(r[3])]

    def benched(self, host, after, before):
        return [r for r in self.rows if r[3].get("kind") == "node_benched" and after <= r[0] <= before
                and (r[3].get("details") or {}).get("machine") == f"chaos{host}"]

    def recovered(self, after):
        """Seconds from `after` to the first step of a worker started after it, or None."""
        for t, key in self.steps:
            if t > after and self.first_line.get(key, 0) > after:
                return round(t - after, 2)
        return None


def seated(history_samples, host, at, role="worker"):
    """Whether host had a worker (a launcher) running in the last process sample before `at`."""
    last = None
    for t, rows in history_samples:
        if t > at:
            break
        last = rows
    return any(r[1] == host and r[2] == role and r[3] != "Z" for r in (last or []))


def seated_by_events(line, host, at, lead=1.0):
    """Whether host's launcher was in a round at `at` by its events, or seated in one formed
    within `lead` seconds after (etcd seats a last round's members without them: a host hit as
    its seats are given is in the round it holds up). The samples miss a round begun since."""
    latest, inside = None, False
    for t, h, number, row in line.rows:
        if t > at + lead:
            break
        if h != host:
            continue
        if number != latest:  # a launcher started again on the host: its own state
            latest, inside = number, False
        kind = row.get("kind")
        if kind == "round_started" or (kind == "rendezvous_formed" and
                                       row.get("node_rank", -1) >= 0):
            inside = True
        elif kind in ("round_ended", "end") and t <= at:
            inside = False
    return inside


def read_samples(history):
    import json
    out = []
    with open(f"{history.work}/samples.jsonl") as f:
        for line in f:
            row = json.loads(line)
            out.append((row["t"], row["p"]))
    return out


def window_end(f, nt):
    """Until when a fault's effect is looked for (and other faults would confound it)."""
    t0 = f["fired"]
    healed = f.get("healed") or t0
    if f["kind"] in ("kill_launcher", "kill_node0", "kill_worker"):
        return t0 + nt + 2
    if f["kind"] in ("pause", "partition"):
        return healed + (nt + 5 if f["duration"] > nt + 2 else 2)
    if f["kind"] == "notice":
        return t0 + 35
    return healed + 2


ROUND_ENDERS = ("kill_launcher", "kill_node0", "kill_worker", "pause", "partition", "notice")
HOST_OUT = ("kill_launcher", "kill_node0", "pause", "partition")


def ends_rounds(f, nt):
    """Whether a fault (fired, its `seated` known) ends the round it hits, as documented."""
    if f["kind"] in ("kill_worker", "notice"):
        return True
    if f["kind"] in ("pause", "partition"):
        return f["seated"] and f["duration"] > nt - 1
    return f["kind"] in ("kill_launcher", "kill_node0") and f["seated"]


def etcd_quorum_lost(faults, members, start, end):
    """The longest time, from a moment in [start, end], for which these faults held a majority
    of etcd's members away at once (killed, or on a host paused or cut off); 0 where none."""
    spans = [(o["fired"], o.get("healed") or o["fired"] + o["duration"], o["host_hit"])
             for o in faults if o["kind"] == "etcd_kill" or
             (o["kind"] in ("pause", "partition") and o["host_hit"] in members)]
    longest = 0.0
    for at, _, _ in spans:
        if not start <= at <= end:
            continue
        holding = [(e, member) for b, e, member in spans if b <= at <= e]
        if len({member for _, member in holding}) > len(members) - (len(members) // 2 + 1):
            longest = max(longest, min(e for e, _ in holding) - at)
    return longest


def confounded(f, others, nt, members=()):
    """Whether an overlapping fault could change what `f` is judged by (module docstring)."""
    host, kind = f["host_hit"], f["kind"]
    same_host = [o for o in others if o["host_hit"] == host and o["kind"] in HOST_OUT]
    # etcd without a quorum (two of its three members away at once): no round forms and no loss
    # is written until one is back, and past --node-timeout the launchers lose the rendezvous. A
    # fault that must change nothing is judged unless that lasted --node-timeout; one that needs
    # etcd to act (a new round, a loss heard), unless it happened at all.
    lost_for = etcd_quorum_lost([f] + others, members, f["fired"] - nt, f["window_end"]) \
        if members else 0
    needs_etcd = ends_rounds(f, nt) or (kind in ("pause", "partition") and f.get("seated"))
    if lost_for > 0 and (lost_for >= nt - 1 or needs_etcd):
        return True
    if kind in ("pause", "partition", "sick"):
        long_cut = kind != "sick" and f["duration"] > nt + 2
        # A seated host silent while another fault ends its round (one up to --node-timeout + 3 s
        # before, whose loss is heard then, or one before its own loss is heard): it is not lost
        # from a round that runs, but left out of the next (a short pause too misses the round
        # formed meanwhile); nothing names its loss.
        ended_first = kind != "sick" and f.get("seated") and any(
            ends_rounds(o, nt) for o in others
            if o["host_hit"] != host and -nt <= f["fired"] - o["fired"] <= nt + 3)
        # c10d: node 0's store's host (host 0) silent meanwhile: the store counts a member's
        # silence from its own return (it cannot tell theirs from its own), so a loss comes late.
        store_away = not members and host != 0 and any(
            o["host_hit"] == 0 and o["kind"] in ("pause", "partition") for o in others)
        return bool(same_host) or ended_first or store_away or \
            (long_cut and any(o["kind"] == "notice" for o in others))
    if kind == "notice":
        # A worker killed while the job ends for the notice fails it, with the worker's status
        # (a worker that fails after the notice is a failure: docs/guides/spot-and-maintenance.md).
        return any(o["kind"] == "kill_worker" for o in others)
    if kind in ("kill_launcher", "kill_node0") and same_host:
        # Its host paused or cut off as it is killed: who it was (seated or waiting) cannot be
        # read from the host, and its loss is heard at its lease's end, as the silence's is.
        return True
    if ends_rounds(f, nt):  # a new round is expected: others may leave too few nodes for one
        away = {o["host_hit"] for o in others if o["kind"] in HOST_OUT + ("sick",)}
        # A waiting launcher away (paused, cut off: its connection open) may be the one seated
        # in the lost one's place; the round then waits --node-timeout for it and forms again
        # (docs/concepts/rendezvous.md).
        spare_away = any(o["kind"] in ("pause", "partition") and not o.get("seated")
                         for o in others)
        return any(o["kind"] == "notice" for o in others) or len(away) >= 2 or spare_away
    return any(ends_rounds(o, nt) for o in others)  # no round may end


def judge(record, history, job):
    line = Timeline(history)
    samples = read_samples(history)
    nt = job.node_timeout
    fired = []
    for f in record.values():
        if not f.get("fired") or not f.get("target"):
            continue
        target = f["target"] if isinstance(f["target"], dict) else {}
        f["host_hit"] = target.get("host", target.get("member"))
        f["seated"] = f["host_hit"] is not None and f["kind"] != "etcd_kill" and \
            (seated(samples, f["host_hit"], f["fired"]) or
             (seated(samples, f["host_hit"], f["fired"], "launcher") and
              seated_by_events(line, f["host_hit"], f["fired"])))
        f["window_end"] = window_end(f, nt)
        fired.append(f)
    rows = []
    for f in sorted(record.values(), key=lambda f: f["n"]):
        row = {"n": f["n"], "kind": f["kind"], "at": f.get("fired"), "target": f.get("target"),
               "duration": f["duration"], "verdict": "not fired", "seen": f.get("effect", ""),
               "recovery_s": None}
        rows.append(row)
        if f not in fired:
            row["verdict"] = "no target" if f.get("fired") else "not fired"
            continue
        t0, end = f["fired"], f["window_end"]
        healed = f.get("healed") or t0
        others = [o for o in fired if o is not f and o["fired"] <= end and o["window_end"] >= t0 - 2]
        formed = line.kinds("rendezvous_formed", t0, end)
        row["recovery_s"] = line.recovered(t0) if formed else None
        expected, seen, ok = expectation(f, line, f["seated"], formed, t0, healed, nt, job, end)
        row.update(expected=expected, seen=seen, seated=f["seated"])
        # The campaign's final SIGTERM within a fault's window ends the job as a stop; a job
        # queued again just before it is still forming its first round (who is seated is not
        # known yet from the process table).
        stopped = getattr(job, "stopped_at", None) is not None and end >= job.stopped_at
        starting = any(0 <= t0 - s <= nt for s in getattr(job, "incarnation_starts", [])[1:])
        members = getattr(job.hosts, "etcd_members", None) or ()
        # A notice of this incarnation fired before it stands until the job ends (the platform
        # lists it until the machine goes): a launcher seated on its host meanwhile (a spare, a
        # comeback) hears it and the job ends preempted, whatever this fault was to do.
        starts = getattr(job, "incarnation_starts", [0])[1:]
        incarnation = 1 + sum(1 for s in starts if s <= t0)
        notice_standing = f["kind"] != "notice" and any(
            o["kind"] == "notice" and o["fired"] < t0 and
            (o.get("target") or {}).get("incarnation") == incarnation for o in fired)
        if stopped or starting or notice_standing or confounded(f, others, nt, members):
            row["verdict"] = "overlapped"
        else:
            row["verdict"] = "held" if ok else "BROKEN"
    return rows


def expectation(f, line, was_seated, formed, t0, healed, nt, job, end):
    """(expected, seen, held) for one fault."""
    kind, host = f["kind"], (f["target"] or {}).get("host")
    next_round = round(formed[0][0] - t0, 2) if formed else None
    # A fault that must end no round is judged by the rounds that ended in its window: a round
    # formed then may have been forming since an earlier fault (waiting for seats, or for MIN).
    # A round formed again without a member seated as it was lost (a "regroup": no restart
    # used) is that loss's documented effect, not a round that ran and ended; nor is a
    # launcher's own end by a signal (killed, or stopped: the harness's leftovers at a requeue).
    regroups = {(r[2], round(r[0], 1)) for r in line.kinds("regroup", t0, end)}
    ended = [r for r in line.kinds("round_ended", t0, end)
             if (r[2], round(r[0], 1)) not in regroups
             and not (r[3].get("details") or {}).get("stopped")]
    ended_seen = f"round ended after {round(ended[0][0] - t0, 2)} s" if ended else "no round ended"
    if kind in ("kill_launcher", "kill_node0"):
        if not was_seated:
            return ("a spare's or benched launcher: no round ends", ended_seen, not ended)
        return (f"a new round within --node-timeout + 2 s ({nt + 2} s)",
                f"new round after {next_round} s" if formed else "no new round",
                next_round is not None and next_round <= nt + 2)
    if kind == "kill_worker":
        return (f"a new round within {nt + 2} s", f"new round after {next_round} s" if formed
                else "no new round", next_round is not None and next_round <= nt + 2)
    if kind in ("pause", "partition"):
        d = f["duration"]
        lost = line.lost(host, t0, healed + 2)
        if not was_seated:
            # Seated while silent, in the place of one another fault took (a round formed
            # meanwhile): that round waits --node-timeout for it, then forms again without it
            # (docs/concepts/rendezvous.md).
            # Named by the round's node 0 (a paused launcher writes nothing); not a launcher
            # started on the host meanwhile (a requeue's).
            seats = [r for r in line.kinds("node_joined", t0, healed)
                     if (r[3].get("details") or {}).get("host") == f"chaos{host}"]
            if seats and not line.kinds("launch", t0 - 1, healed, host):
                late = [r for r in lost if r[0] >= seats[0][0]]
                t_lost = round(late[0][0] - seats[0][0], 2) if late else None
                return ("seated while silent: lost from that round within --node-timeout + 3 s",
                        f"lost {t_lost} s after its seat" if late else "not lost",
                        t_lost is not None and t_lost <= nt + 3)
            # Under etcd a round after the first starts at once, naming no member as it joins:
            # its loss "before it came to round N" (formed again without it) is the seat, given
            # as that round formed.
            never_came = {r[3].get("round") for r in lost
                          if ((r[3].get("details") or {}).get("first_failure") or {}).get("regroup")}
            if lost and len(never_came) == 1 and all(
                    ((r[3].get("details") or {}).get("first_failure") or {}).get("regroup")
                    for r in lost):
                rounds = [r for r in line.kinds("rendezvous_formed", t0, healed + 2)
                          if r[3].get("round") in never_came]
                t_lost = round(lost[0][0] - rounds[0][0], 2) if rounds else None
                return ("seated while silent: lost from that round within --node-timeout + 3 s",
                        f"lost {t_lost} s after its round formed" if rounds
                        else "lost from a round not seen forming",
                        t_lost is not None and 0 <= t_lost <= nt + 3)
            return ("not seated: no round ends", f"{len(lost)} loss events", not lost)
        if d < nt - 1:
            return ("shorter than --node-timeout: the seat is kept",
                    "seat lost" if lost else "seat kept", not lost)
        if d > nt + 2:
            t_lost = round(lost[0][0] - t0, 2) if lost else None
            back = line.kinds("benched_waiting", healed, healed + nt + 20, host) + \
                line.kinds("spare_waiting", healed, healed + nt + 20, host) + \
                line.kinds("rendezvous_formed", healed, healed + nt + 20, host)
            # An etcd member's host silent too: the watches streaming from its member move to
            # another within a third of the lease and a member's try (2 s), as documented.
            bound = nt + 3 + (nt / 3 + 2 if host in job.hosts.etcd_members else 0)
            return (f"longer than --node-timeout: lost within {bound:g} s, back as a spare after",
                    f"lost after {t_lost} s, " + ("back" if back else "not back"),
                    t_lost is not None and t_lost <= bound and bool(back))
        return ("within a second or two of --node-timeout: either", "seat lost" if lost else
                "seat kept", True)
    if kind == "sick":
        during = [r for r in line.kinds("rendezvous_formed", t0 + 1, healed) if r[1] != host]
        benched = line.benched(host, t0, healed + 5)
        # Seated in a round formed after its next look at its checks (a waiting launcher's are
        # read again where older than 5 s: docs/guides/health.md), while still sick.
        # A round at MIN may seat it again, as documented: "a benched node is seated again only
        # where the job would otherwise end".
        least = int(job.nnodes.split(":")[0])
        seated_sick = [r for r in line.kinds("rendezvous_formed", t0 + 7, healed, host)
                       if r[3].get("node_rank", -1) >= 0 and
                       (r[3].get("details") or {}).get("nodes", 0) > least]
        if not during:
            return ("no round formed while sick: nothing", f"{len(benched)} benches", True)
        if f.get("seated"):
            return ("a round formed meanwhile benches the host",
                    ("benched" if benched else "not benched") +
                    (", seated sick" if seated_sick else ""), bool(benched) and not seated_sick)
        # A spare the rounds did not need is never seated; counted in one, it is benched.
        return ("a spare: never seated while sick", "seated sick" if seated_sick else
                f"not seated, {len(benched)} benches", not seated_sick)
    if kind == "notice":
        inc = f["target"]["incarnation"]
        # Launchers the nemesis killed (-9) end as they were made to; those the campaign stopped
        # itself (comebacks after node 0's store ended with the job: Job.ended) are not judged.
        judged = [l for l in job.launches if l.incarnation == inc and l.ended and
                  l.proc.returncode != -9 and not l.stopped_by_harness]
        ends = [l.proc.returncode for l in judged]
        # The notice stands until the job ends. A waiting launcher (a spare, a benched node)
        # does not act on its machine's notice while it waits (docs/guides/spot-and-
        # maintenance.md); seated while it stands, it hears it then, as any seated node.
        job_end = min((l.ended for l in judged), default=t0)
        if not was_seated and not [r for r in line.kinds("rendezvous_formed", t0, job_end, host)
                                   if r[3].get("node_rank", -1) >= 0]:
            heard = [r for r in line.kinds("notice", t0, job_end)
                     if (r[3].get("details") or {}).get("host") == f"chaos{host}"]
            return ("a waiting launcher: not acted on while it waits",
                    f"heard {len(heard)} times", not heard)
        return ("every launcher exits 200 (preempted)", f"exits {sorted(set(ends))}",
                bool(ends) and set(ends) == {200})
    if kind in ("flood", "etcd_kill"):
        return ("the job runs on: no round ends", ended_seen, not ended)
    return ("?", "?", True)


def table(rows, began):
    out = ["faults:", f"  {'#':>3} {'kind':<14} {'t(s)':>6} {'target':<22} {'dur':>5} "
                      f"{'expected':<52} {'seen':<30} {'recovery':>8}  verdict"]
    for r in rows:
        target = r["target"]
        where = (f"host {target.get('host', target.get('member'))}" if isinstance(target, dict)
                 else "-")
        if isinstance(target, dict) and target.get("rank") is not None:
            where += f" rank {target['rank']}"
        at = f"{r['at'] - began:6.1f}" if r["at"] else "     -"
        rec = f"{r['recovery_s']:.2f}" if r["recovery_s"] is not None else "-"
        out.append(f"  {r['n']:>3} {r['kind']:<14} {at} {where:<22} {r['duration']:5.1f} "
                   f"{r.get('expected', '')[:52]:<52} {str(r['seen'])[:30]:<30} {rec:>8}  {r['verdict']}")
    judged = [r for r in rows if r["verdict"] in ("held", "BROKEN")]
    out.append(f"  {len(rows)} faults, {len(judged)} judged alone: "
               f"{sum(r['verdict'] == 'held' for r in judged)} as documented, "
               f"{sum(r['verdict'] == 'BROKEN' for r in judged)} not")
    return "\n".join(out)


def as_invariant(rows):
    broken = [f"fault #{r['n']} {r['kind']} at {r['target']}: expected {r['expected']}, seen {r['seen']}"
              for r in rows if r["verdict"] == "BROKEN"]
    judged = sum(r["verdict"] in ("held", "BROKEN") for r in rows)
    return {"invariant": "3. bounded effects", "held": not broken,
            "detail": f"{judged} of {len(rows)} faults judged alone, {len(broken)} not as documented",
            "lines": broken[:12]}
