"""Whether --dry-run's plan tells the truth: every variable it shows a worker is the one that
worker got in the real run.

usage: dry_run_matches.py DUMP_DIR < PLAN.json
DUMP_DIR holds env.RANK.json, each worker's own environment as it wrote it. Prints "same", or
the first differences.
"""
import json
import os
import sys

plan = json.load(sys.stdin)
wrong = []
for worker in plan["workers"]:
    path = os.path.join(sys.argv[1], f"env.{worker['rank']}.json")
    if not os.path.exists(path):
        wrong.append(f"rank {worker['rank']} wrote no environment")
        continue
    with open(path) as f:
        real = json.load(f)
    wrong += [f"rank {worker['rank']} {name}: dry-run {value!r}, real {real.get(name)!r}"
              for name, value in worker["env"].items() if real.get(name) != value]
print("; ".join(wrong[:6]) or "same")
