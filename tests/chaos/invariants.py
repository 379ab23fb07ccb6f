"""The invariants, checked on the recorded history (history.py), never on one outcome alone:

0. no launcher crashes: no launcher's output holds a crash report (its stack, quoted whole);
1. no double rank: in each round (run id, round) no two workers hold the same global rank, the
   rank a worker was given is the one its launcher's events name, and every worker of the round
   agrees on its world size, MASTER_ADDR:MASTER_PORT and every allreduce's result;
2. no lost work: no checkpoint is torn, each one holds what its step must, no round resumes from
   older than the newest checkpoint done before it looked, and a round loses at most the steps
   since the last checkpoint;
4. one verdict: in each incarnation of the job, the launchers that ended on their own all end with
   the same status and the same first failure; the campaign's final SIGTERM ends it as a stop
   (143), or, for a launcher that heard a notice before it, as that preemption (200);
5. (leaks.py) nothing left behind; descriptors and memory flat;
6. the reports are right: the launchers' events name every round the workers ran in, and each
   launcher's summary's running time agrees with its workers' own timestamps within 2 % (and
   STARTUP_S a worker's start: its interpreter's start before its first line, which its own
   clock cannot see).
Each result: {"invariant", "held", "detail", "lines"} (lines: the history that broke it).
"""
import glob
import json
import os

from history import event_time, read_jsonl
from leaks import growth

# A worker's own clock starts at its first line, written once its interpreter started: on these
# loaded cores up to this long after its launcher spawned it (counted in the launcher's running
# time, and rightly). On a launcher of a few short rounds it is more than 2 % of its time.
STARTUP_S = 0.5


def result(name, broken, detail, lines=(), most=12):
    return {"invariant": name, "held": not broken, "detail": detail, "lines": list(lines)[:most]}


def run_of(row, generation):
    """A round's run: its run id, and under etcd the generation (a launcher started after the
    job's end, as Kubeflow starts a job's pods again under its name, begins the next generation
    of the id, its rounds from 0 again)."""
    return row["run_id"] + (f" generation {generation}" if generation else "")


def worker_rounds(history):
    """{(host, pid): (run, round, rank, launch)} from the launchers' worker_started events."""
    placed = {}
    for number, (host, rows) in history.events().items():
        generation = None
        for row in rows:
            if row.get("kind") == "rendezvous_formed":
                generation = row["details"].get("generation")
            if row.get("kind") == "worker_started":
                pid = row["details"]["pid"]
                placed[(host, pid)] = (run_of(row, generation), row.get("round") or 0,
                                       row.get("rank"), number)
    return placed


def no_double_rank(history):
    placed = worker_rounds(history)
    logs = history.worker_logs()
    broken, rounds = [], {}
    for key, rows in logs.items():
        start = next((r for r in rows if r.get("ev") == "start"), None)
        if start is None:
            continue
        if key not in placed:
            broken.append(f"worker {key} (rank {start['rank']}) is in no launcher's worker_started")
            continue
        run_id, rnd, rank, _ = placed[key]
        if rank != start["rank"]:
            broken.append(f"worker {key}: its events say rank {rank}, its RANK is {start['rank']}")
        rounds.setdefault((run_id, rnd), []).append((key, start, rows))
    results = 0
    for (run_id, rnd), members in sorted(rounds.items()):
        by_rank = {}
        for key, start, rows in members:
            by_rank.setdefault(start["rank"], []).append(key)
        for rank, holders in by_rank.items():
            if len(holders) > 1:
                broken.append(f"{run_id} round {rnd}: rank {rank} held by {holders}")
        for what in ("world", "master"):
            seen = {start[what] for _, start, _ in members}
            if len(seen) > 1:
                broken.append(f"{run_id} round {rnd}: ranks disagree on {what}: {sorted(map(str, seen))}")
        world = members[0][1]["world"]
        if max(by_rank) >= world:
            broken.append(f"{run_id} round {rnd}: rank {max(by_rank)} in a world of {world}")
        steps = {}
        for key, _, rows in members:
            for r in rows:
                if r.get("ev") == "step":
                    results += 1
                    steps.setdefault(r["step"], set()).add(r["result"])
                    if not r["ok"]:
                        broken.append(f"{run_id} round {rnd}: worker {key} step {r['step']}: "
                                      f"allreduce gave {r['result']}")
        for step, seen in steps.items():
            if len(seen) > 1:
                broken.append(f"{run_id} round {rnd} step {step}: results differ: {sorted(seen)}")
    return result("1. no double rank", broken,
                  f"{len(rounds)} rounds, {len(logs)} workers, {results} allreduce results checked",
                  broken)


def no_lost_work(history, every):
    ckpt = os.path.join(history.work, "ckpt")
    broken, complete = [], 0
    for path in glob.glob(os.path.join(ckpt, "step-*.json")):
        name = os.path.basename(path)
        try:
            with open(path) as f:
                record = json.load(f)
            state = record["state"]
            step = int(name[len("step-"):-len(".json")])
            if state["step"] != step or state["total"] != step * (step + 1) // 2:
                broken.append(f"checkpoint {name} holds step {state['step']}, total {state['total']}")
            complete += 1
        except (OSError, ValueError, KeyError) as e:
            broken.append(f"checkpoint {name} is torn: {e}")
    logs = history.worker_logs()
    saved, done = [], []  # (time, step) of each checkpoint written, each step done
    for rows in logs.values():
        for r in rows:
            if r.get("ev") == "checkpoint":
                saved.append((r["t"], r["step"]))
            elif r.get("ev") == "step" and r.get("ok"):
                done.append((r["t"], r["step"] - 1))  # a step's record: the state before it
    saved.sort()
    done.sort()
    resumes, worst = 0, 0
    for key, rows in logs.items():
        for r in rows:
            if r.get("ev") != "resume":
                continue
            resumes += 1
            if r["torn"]:
                broken.append(f"worker {key} found torn checkpoints {r['torn']}")
            if r["total"] != r["step"] * (r["step"] + 1) // 2:
                broken.append(f"worker {key} resumed at step {r['step']} with total {r['total']}")
            newest = max((s for t, s in saved if t < r["t"]), default=0)
            if r["step"] < newest:
                broken.append(f"worker {key} resumed at step {r['step']}, older than checkpoint "
                              f"{newest} (done {r['t'] - max(t for t, s in saved if s == newest):.1f} s before)")
            furthest = max((s + 1 for t, s in done if t < r["t"]), default=0)
            lost = furthest - r["step"]
            worst = max(worst, lost)
            if lost > every:
                broken.append(f"worker {key} resumed at step {r['step']}: {lost} steps lost "
                              f"(step {furthest} was done), more than the {every} between checkpoints")
    return result("2. no lost work", broken,
                  f"{complete} checkpoints whole, {resumes} resumes checked, at most {worst} steps "
                  f"lost at a resume (checkpoint every {every})", broken)


def killed_launches(record):
    """The launches the nemesis killed (-9)."""
    return {f["target"]["launch"] for f in record.values()
            if f.get("kind") in ("kill_launcher", "kill_node0") and f.get("target")}


def notice_before(launch, stopped_at):
    """Whether the launcher heard a notice before the final SIGTERM: the stop that follows a
    notice is that preemption's end, exit 200 (docs/guides/spot-and-maintenance.md, "The end").
    A launcher waiting for a seat hears no notice: the same SIGTERM ends it 143, a stop."""
    return any(row.get("kind") == "notice" and event_time(row) < stopped_at
               for row in read_jsonl(launch.files["events"]))


def one_verdict(job, record):
    killed = killed_launches(record)
    broken, told = [], []
    # The launchers the final SIGTERM found (one gone alone before it, counted lost or
    # preempted, is judged with its incarnation below): each ends as a stop, 143, or as the end
    # of a notice it heard before, 200, which its incarnation counts as the same stop.
    stopped_at = getattr(job, "stopped_at", None) or 0
    last = [l for l in job.launches if l.incarnation == job.incarnation and l.number not in killed
            and (l.ended is None or l.ended >= stopped_at - 1)]
    after_notice = {l.number for l in last
                    if l.proc.returncode == 200 and notice_before(l, stopped_at)}
    as_stopped = (143, 143, (None, None, None))
    for incarnation in sorted({l.incarnation for l in job.launches}):
        ends, gone_alone = [], 0
        for launch in job.launches:
            if (launch.incarnation != incarnation or launch.number in killed or
                    launch.stopped_by_harness):
                continue
            try:
                with open(launch.files["summary"]) as f:
                    summary = json.load(f)
            except (OSError, ValueError):
                broken.append(f"incarnation {incarnation}: launch {launch.number} on host "
                              f"{launch.host} left no summary (exit {launch.proc.returncode})")
                continue
            failure = summary.get("first_failure") or {}
            # Counted lost (paused or cut off past --node-timeout) while the job went on without
            # it, then ended on its own (a notice stood: its machine goes away) naming its own
            # loss: no node of the job's at the job's end, which it may not live to read
            # (docs/concepts/rendezvous.md).
            own_loss = failure.get("host") == f"chaos{launch.host}" and \
                "its launcher was lost: this node was silent" in str(failure.get("status"))
            # Or preempted (a notice for its machine) while the others went on to a later
            # round: it left the job before the job's end.
            left_early = launch.proc.returncode == 200 and summary.get("notice") and any(
                event_time(row) > launch.ended for other in job.launches
                if other.incarnation == incarnation and other is not launch
                for row in read_jsonl(other.files["events"])
                if row.get("kind") == "rendezvous_formed" and row.get("node_rank", -1) >= 0)
            # Or draining a notice, its own worker failed after every other launcher of the job
            # had ended (preempted, each told its own workers' end): no node was left to agree
            # with it (a worker that fails after the notice is a failure: its node says so).
            others_ended = [other.ended for other in job.launches
                            if other.incarnation == incarnation and other is not launch
                            and other.number not in killed and not other.stopped_by_harness]
            failed_after_all = bool(summary.get("notice")) and bool(failure.get("time")) and \
                bool(others_ended) and None not in others_ended and \
                event_time({"time": failure["time"]}) > max(others_ended)
            if own_loss or left_early or failed_after_all:
                gone_alone += 1
                continue
            ends.append((launch.proc.returncode, summary.get("exit_code"),
                         (failure.get("rank"), failure.get("host"), failure.get("pid")),
                         launch.number))
        statuses = {as_stopped if e[3] in after_notice else (e[0], e[1], e[2]) for e in ends}
        stragglers = sum(l.stopped_by_harness for l in job.launches if l.incarnation == incarnation)
        told.append(f"incarnation {incarnation}: " + ", ".join(sorted({str(e[0]) for e in ends})) +
                    (f" ({stragglers} come after its end, stopped)" if stragglers else "") +
                    (f" ({gone_alone} gone alone: counted lost, preempted, or failed after every other had ended)" if gone_alone else ""))
        if len(statuses) > 1:
            broken.append(f"incarnation {incarnation}: launchers end differently: "
                          f"{sorted(map(str, ends))}")
    if any(l.proc.returncode != 143 and l.number not in after_notice for l in last):
        broken.append("the final SIGTERM: " + ", ".join(
            f"launch {l.number} on host {l.host} exit {l.proc.returncode}" for l in last))
    return result("4. one verdict", broken, "; ".join(told), broken)


def reports_right(history, job, record):
    placed = worker_rounds(history)
    rounds_in_events = set()
    for host, rows in history.events().values():
        for row in rows:
            if row.get("kind") == "rendezvous_formed":
                rounds_in_events.add((host, run_of(row, row["details"].get("generation")),
                                      row.get("round") or 0))
    broken = []
    for (host, pid), (run_id, rnd, _, _) in placed.items():
        if (host, run_id, rnd) not in rounds_in_events:
            broken.append(f"worker {host}.{pid} ran in {run_id} round {rnd}, which host {host}'s "
                          f"events never formed")
    # Each launcher's running time against its workers' own: from each worker's first line to its
    # exit as its launcher saw it. A worker stopped before it wrote a line (a round ended as it
    # began) counts from its start as its launcher saw it. A launcher killed (-9) is left out:
    # its summary is the one it wrote at its last restart, not its whole time.
    logs = history.worker_logs()
    killed = killed_launches(record)
    compared, worst = 0, 0.0
    for number, (host, rows) in history.events().items():
        launch = job.launches[number]
        if number in killed:
            continue
        try:
            with open(launch.files["summary"]) as f:
                running = json.load(f)["time"]["running_seconds"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        spans = 0.0
        started = {}
        for row in rows:
            if row.get("kind") == "worker_started":
                started[row["details"]["pid"]] = event_time(row)
            if row.get("kind") != "worker_exited":
                continue
            pid = row["details"]["pid"]
            first = next((r["t"] for r in logs.get((host, pid), []) if "t" in r), started.get(pid))
            if first is not None:
                spans += event_time(row) - first
        if running < 10:
            continue
        compared += 1
        off = abs(running - spans) / running
        worst = max(worst, off)
        if abs(running - spans) > 0.02 * running + STARTUP_S * len(started):
            broken.append(f"launch {number} on host {host}: its summary's running time {running:.1f} s, "
                          f"its workers' own {spans:.1f} s ({off * 100:.1f} % apart)")
    return result("6. the reports are right", broken,
                  f"{len(placed)} workers' rounds in the events; {compared} launchers' running time "
                  f"within {worst * 100:.1f} % of their workers' own", broken)


def kinds_text(row):
    """' (+6 socket, -1 pipe)': which kinds of descriptor made a launcher's growth."""
    kinds = row.get("kinds") or {}
    return " (" + ", ".join(f"{d:+d} {k}" for k, d in kinds.items()) + ")" if kinds else ""


def flat(history, job, record):
    fired = [f["fired"] for f in record.values() if f.get("fired")]
    # Left out: a flood (its strangers' connections), and a cut host until it is counted lost
    # and back (the store's half of its connections lingers until then).
    nt = job.node_timeout
    busy = [(f["fired"], (f.get("healed") or f["fired"]) + (2 if f["kind"] == "flood" else nt + 5))
            for f in record.values() if f["kind"] in ("flood", "partition") and f.get("fired")]
    # Per fault: a life across a few of them, a minute at least in one state (a leak shows over
    # time; a state's own moments, a watch dialed or a connection closing, fill a short one).
    rows = [r for r in growth(os.path.join(history.work, "samples.jsonl"), fired, busy)
            if r["faults"] >= 2 and r["seconds"] >= 60]
    # Flat: a leak grows with the faults. Descriptors: at most 2 more (what one state holds
    # beside another's, a watch kept, a connection closing) and a quarter a fault; memory within
    # 1 MiB plus 16 KiB a fault (each round's record stays in the summary's "rounds"; the
    # allocator's arenas grow in steps).
    broken = [f"launcher {r['pid']} on host {r['host']} ({'seated' if r['seated'] else 'waiting'}): "
              f"{r['fds']:+d} descriptors{kinds_text(r)}, {r['rss_kib']:+d} KiB over "
              f"{r['faults']} faults ({r['seconds']} s)"
              for r in rows
              if r["fds"] > 2 + r["faults"] / 4 or r["rss_kib"] > 1024 + 16 * r["faults"]]
    worst = max(rows, key=lambda r: (r["fds"], r["rss_kib"]), default=None)
    # A short campaign whose every launcher changed state often has no life to measure: said,
    # and judged by the long ones (benchmarks/chaos.py).
    detail = (f"{len(rows)} launchers followed; the most grown: {worst['fds']:+d} descriptors, "
              f"{worst['rss_kib']:+d} KiB over {worst['faults']} faults" if worst else
              "not measured: no launcher lived across 2 faults and a minute in one state")
    return result("5b. descriptors and memory flat", broken, detail, broken)


# A launcher's own crash: its report (supervisor/crash_report.hpp) or the sanitizer's, or, from a
# build without either, its guardian's word.
CRASH_MARKS = ("internal error: the launcher (pid", "ERROR: AddressSanitizer",
               "runtime error:", "was killed by signal 11 (SIGSEGV); its guardian")


def no_crash(job):
    """0. no launcher crashes: every launch's output, its crash report quoted whole (its stack)."""
    broken, lines = [], []
    for launch in job.launches:
        try:
            with open(launch.files["out"], errors="replace") as f:
                out = f.read().splitlines()
        except OSError:
            continue
        at = next((i for i, line in enumerate(out) if any(m in line for m in CRASH_MARKS)), None)
        if at is None:
            continue
        broken.append(f"launch {launch.number} on host {launch.host} crashed: {out[at]}")
        lines += [f"launch {launch.number}: {line}" for line in out[at:at + 40]]
    detail = f"{len(job.launches)} launches, " + (f"{len(broken)} crashed" if broken else "none crashed")
    # The whole stack, for the track record.
    return result("0. no launcher crashes", broken, detail, broken + lines, most=len(broken + lines))


def check(history, job, record, began, stopped):
    return [no_crash(job), no_double_rank(history), no_lost_work(history, job.ckpt_every),
            one_verdict(job, record), flat(history, job, record), reports_right(history, job, record)]


def table(results, seed):
    lines = [f"invariants (seed {seed}):"]
    for r in results:
        lines.append(f"  {'held  ' if r['held'] else 'BROKEN'} {r['invariant']}: {r['detail']}")
        for line in r["lines"]:
            lines.append(f"           {line}")
    return "\n".join(lines)
