"""Fault campaigns by hand (issue 73): tests/chaos/campaign.py, seed after seed, under each engine,
until a number of faults is reached; then one table of every campaign (its seed, engine, faults,
faults judged alone and as documented, each invariant held or broken, recovery times, the CPUs'
busy share), in Markdown for benchmarks/RESULTS.md. Each campaign's report is kept in OUT.

usage: /usr/bin/python3 benchmarks/chaos.py BUILD_DIR OUT [--faults 1000] [--minutes 60]
           [--faults-per-minute 5] [--engines c10d,etcd] [--first-seed 100] [--mix KIND=W,...]
           (as root)
A campaign whose invariants broke is kept (--keep: its whole history, in /tmp) and named; the run
goes on with the next seed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CAMPAIGN = os.path.join(HERE, "..", "tests", "chaos", "campaign.py")


def run_one(build, out, engine, seed, minutes, per_minute, mix=""):
    report = os.path.join(out, f"{engine}-{seed}.json")
    log = os.path.join(out, f"{engine}-{seed}.log")
    with open(log, "w") as f:
        status = subprocess.run(
            ["/usr/bin/python3", CAMPAIGN, "--bin", os.path.join(build, "launcher", "aml-launch"),
             "--engine", engine, "--seed", str(seed), "--minutes", str(minutes),
             "--faults-per-minute", str(per_minute), "--report", report, "--keep-broken"]
            + (["--mix", mix] if mix else []),
            stdout=f, stderr=subprocess.STDOUT).returncode
    try:
        with open(report) as f:
            return status, json.load(f)
    except (OSError, ValueError):
        return status, None


def row(engine, seed, status, report):
    if report is None:
        return f"| {engine} | {seed} | - | - | - | - | campaign did not run (exit {status}) |"
    faults = report["faults"]
    judged = [f for f in faults if f["verdict"] in ("held", "BROKEN")]
    recov = [f["recovery_s"] for f in faults if f.get("recovery_s") is not None]
    broken = [i["invariant"] for i in report["invariants"] if not i["held"]]
    mix = {}
    for f in faults:
        mix[f["kind"]] = mix.get(f["kind"], 0) + 1
    return (f"| {engine} | {seed} | {len(faults)} | {sum(f['verdict'] == 'held' for f in judged)} of "
            f"{len(judged)} | {statistics.median(recov) if recov else '-'} | "
            f"{report['cpu_busy'] * 100:.0f} % | {'all held' if not broken else 'BROKEN: ' + ', '.join(broken)} "
            f"| {', '.join(f'{k} {v}' for k, v in sorted(mix.items()))} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("out")
    p.add_argument("--faults", type=int, default=1000)
    p.add_argument("--minutes", type=float, default=60)
    p.add_argument("--faults-per-minute", type=float, default=5)
    p.add_argument("--engines", default="c10d,etcd")
    p.add_argument("--first-seed", type=int, default=100)
    p.add_argument("--mix", default="",
                   help="the fault kinds' weights, passed to each campaign (tests/chaos/campaign.py)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows, total, seed = [], 0, args.first_seed
    engines = args.engines.split(",")
    while total < args.faults:
        engine = engines[(seed - args.first_seed) % len(engines)]
        status, report = run_one(os.path.abspath(args.build), args.out, engine, seed, args.minutes,
                                 args.faults_per_minute, args.mix)
        rows.append(row(engine, seed, status, report))
        total += len(report["faults"]) if report else 0
        print(rows[-1], flush=True)
        seed += 1
        if report is None:
            break
    print("\n| engine | seed | faults | judged alone: as documented | median recovery (s) | "
          "CPUs busy | invariants | the fault mix |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n{total} faults in {len(rows)} campaigns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
