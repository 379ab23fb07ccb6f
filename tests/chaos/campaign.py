#!/usr/bin/env python3
"""A seeded fault campaign against a real elastic training job on five namespace hosts.

The job: aml-launch --nnodes 3:4 on five hosts (one spare), a torch Gloo loop (train_job.py) that
checks every allreduce and checkpoints atomically. The nemesis: faults drawn from --seed
(schedule.py), printed before the campaign starts, carried out with overlaps (nemesis.py). Then
the invariants are checked on the recorded history (invariants.py) and every fault's seen effect
is set beside what the docs say (effects.py).

usage: /usr/bin/python3 tests/chaos/campaign.py --bin build/launcher/aml-launch
           [--engine c10d|etcd] [--seed N] [--minutes M] [--faults-per-minute F]
           [--node-timeout S] [--workers-per-node W] [--mix KIND=W,...] [--report FILE.json]
           [--keep|--keep-broken]
Exit 0 when every invariant held, 1 when one broke, 2 when the campaign could not run. As root.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import effects  # noqa: E402
import invariants  # noqa: E402
import leaks  # noqa: E402
from history import History  # noqa: E402
from hosts import Hosts  # noqa: E402
from job import Job  # noqa: E402
from nemesis import Nemesis  # noqa: E402
from schedule import describe, draw, kinds_for, parse_mix  # noqa: E402

HOSTS = 5
ETCD_MEMBERS = (0, 1, 2)


def arguments():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", required=True, help="the aml-launch to test")
    p.add_argument("--engine", choices=("c10d", "etcd"), default="c10d")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--minutes", type=float, default=3.0)
    p.add_argument("--faults-per-minute", type=float, default=5.0)
    p.add_argument("--node-timeout", type=int, default=10)
    p.add_argument("--workers-per-node", type=int, default=1)
    p.add_argument("--mix", default="",
                   help="fault kinds' weights in place of the usual ones, e.g. "
                        "pause=4,partition=4,etcd_kill=3 (0 leaves a kind out)")
    p.add_argument("--report", help="the campaign's results as JSON (faults, invariants)")
    p.add_argument("--keep", action="store_true", help="keep the recorded history's folder")
    p.add_argument("--keep-broken", action="store_true",
                   help="keep the recorded history's folder where an invariant broke")
    return p.parse_args()


def wait_for_steps(history, job, seconds):
    """Until a worker of the job's newest incarnation has done a step."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        for rows in history.worker_logs().values():
            if any(r.get("ev") == "step" for r in rows):
                return True
        if job.ended():
            return False
        time.sleep(0.2)
    return False


# How long a notice takes to end the job at most: the stand-in's next poll (1 s), the workers'
# --term-timeout (5 s) and the launchers' goodbyes, with room to spare.
NOTICE_ENDS_WITHIN = 20.0


def settle(history, job, seconds, record):
    """After the last fault: until a round runs steps again (the job is healthy at its end), and
    no notice of the incarnation that runs is still ending it: the final SIGTERM is then a stop of
    a running job, never a race with a notice's end."""
    mark = time.time()
    deadline = mark + seconds
    while time.time() < deadline:
        if job.ended():
            job.start_incarnation()
            mark = time.time()
        noticed = [f["fired"] for f in record.values() if f["kind"] == "notice" and "fired" in f
                   and (f.get("target") or {}).get("incarnation") == job.incarnation]
        since = max([mark + 1] + [t + NOTICE_ENDS_WITHIN for t in noticed])
        for rows in history.worker_logs().values():
            if any(r.get("ev") == "step" and r["t"] > since for r in rows):
                return True
        time.sleep(0.2)
    return False


def main():
    args = arguments()
    if os.geteuid() != 0:
        sys.exit("campaign: run as root (network namespaces, nft)")
    if not shutil.which("nft"):
        sys.exit("campaign: nft is missing (apt-get install nftables): the partitions need it")
    try:
        mix = parse_mix(args.mix)
        kinds_for(args.engine, mix)
    except ValueError as e:
        print(f"campaign: {e}", file=sys.stderr)
        return 2
    before = leaks.snapshot()
    net = f"ch{os.getpid() % 100000}"
    work = tempfile.mkdtemp(prefix=f"aml-chaos-{args.engine}-{args.seed}-")
    os.chmod(work, 0o755)
    faults = draw(args.seed, args.engine, HOSTS, args.minutes, args.faults_per_minute,
                  args.node_timeout, ETCD_MEMBERS, warmup=5.0, mix=mix)
    print(describe(faults, args.engine, args.seed, mix), flush=True)
    hosts = Hosts(net, HOSTS, work)
    job = Job(hosts, work, os.path.abspath(args.bin), args.engine, workers=args.workers_per_node,
              node_timeout=args.node_timeout)
    history = History(hosts, work, args.bin)
    report = {"seed": args.seed, "engine": args.engine, "minutes": args.minutes,
              "faults_per_minute": args.faults_per_minute, "node_timeout": args.node_timeout,
              "mix": mix}
    try:
        hosts.up()
        if args.engine == "etcd":
            hosts.etcd_up(ETCD_MEMBERS)
        job.start_incarnation()
        history.start()
        if not wait_for_steps(history, job, 180):
            print(f"campaign: the job never took a step; see {work}/out", file=sys.stderr)
            args.keep = True
            return 2
        began = time.time()
        nemesis = Nemesis(hosts, job, history, faults, began)
        end = began + args.minutes * 60
        requeued = []
        while nemesis.due() is not None or time.time() < end:
            nemesis.step(time.time())
            if job.ended():
                requeued.append({"at": time.time(), "incarnation": job.incarnation, "exits": sorted(
                    {l.proc.returncode for l in job.launches if l.incarnation == job.incarnation})})
                job.start_incarnation()
            time.sleep(0.05)
        nemesis.drain()
        report["healthy_at_end"] = settle(history, job, 120, nemesis.record)
        stopped = time.time()
        job.stop()
        history.stop()
        report.update(began=began, stopped=stopped, requeued=requeued,
                      cpu_busy=history.cpu_busy_share(), cpu_own=history.own_cpu_share())
        faults_seen = effects.judge(nemesis.record, history, job)
        results = invariants.check(history, job, nemesis.record, began, stopped)
        results.insert(3, effects.as_invariant(faults_seen))  # after 0, 1 and 2
    finally:
        job.stop(timeout=30)
        hosts.down()
        history.stop_sampling.set()
    if args.keep_broken and not all(r["held"] for r in results):
        args.keep = True
    if not args.keep:
        subprocess.run(["rm", "-rf", work])
    results.append(leaks.check(before, hosts, work, keep=args.keep))
    report.update(faults=faults_seen, invariants=results)
    print(effects.table(faults_seen, report["began"]))
    print(invariants.table(results, args.seed))
    print(f"campaign: {args.engine}, seed {args.seed}: {len(faults_seen)} faults in "
          f"{(report['stopped'] - report['began']) / 60:.1f} min; the CPUs busy "
          f"{report['cpu_busy'] * 100:.0f} % of the time, {report['cpu_own'] * 100:.0f} % for the "
          f"campaign's own processes; the job ended and was queued "
          f"again {len(report['requeued'])} times; the history {'in ' + work if args.keep else 'removed'}")
    if args.report:
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1, default=str)
    return 0 if all(r["held"] for r in results) else 1

if __name__ == "__main__":
    sys.exit(main())
