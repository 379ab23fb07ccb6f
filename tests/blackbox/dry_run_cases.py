#!/usr/bin/env python3
"""The repository's own --dry-run cases (tests/fixtures/dry_run_cases.json) against a binary.

usage: dry_run_cases.py --bin PATH [CASES.json ...]

Each case runs as  env -i PATH=... <case env> BIN --dry-run --format json <args> -- /bin/true.
A case with "expect" must exit 0 and print JSON whose fields equal the expected ones ("ranks":
the workers' ranks in order); one with "error" must exit 2 and name each listed word on stderr.
The file format is the one of the organisation's contract cases, so either file can be given.
Ends with 'N passed, N failed'; exits 1 when a case failed.
"""
import json
import os
import subprocess
import sys


def run_case(binary, case):
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", **case.get("env", {})}
    command = [binary, "--dry-run", "--format", "json", *case.get("args", []), "--", "/bin/true"]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "no answer in 60 s"
    stderr = done.stderr.strip()[:300]
    if "error" in case:
        if done.returncode != 2:
            return f"exit {done.returncode}, wanted 2 (stderr: {stderr})"
        missing = [word for word in case["error"]["mentions"] if word not in done.stderr]
        return f"stderr does not name {missing}: {stderr}" if missing else None
    if done.returncode != 0:
        return f"exit {done.returncode} (stderr: {stderr})"
    try:
        plan = json.loads(done.stdout)
    except ValueError as e:
        return f"stdout is not JSON ({e}): {done.stdout[:200]}"
    wrong = []
    for field, wanted in case["expect"].items():
        got = [w.get("rank") for w in plan.get("workers", [])] if field == "ranks" else dig(plan, field)
        if got != wanted:
            wrong.append(f"{field}={got!r}, wanted {wanted!r}")
    return "; ".join(wrong) or None


def dig(plan, field):
    """A field of the plan; "workers.0.env.MASTER_ADDR" walks into it."""
    got = plan
    for step in field.split("."):
        if isinstance(got, list) and step.isdigit() and int(step) < len(got):
            got = got[int(step)]
        elif isinstance(got, dict):
            got = got.get(step)
        else:
            return None
    return got


def main(argv):
    if len(argv) < 2 or argv[0] != "--bin":
        print(__doc__, file=sys.stderr)
        return 2
    binary, files = argv[1], argv[2:]
    if not files:
        here = os.path.dirname(os.path.abspath(__file__))
        files = [os.path.join(here, "..", "fixtures", "dry_run_cases.json")]
    passed = failed = 0
    for path in files:
        with open(path) as f:
            cases = json.load(f)
        for case in cases:
            why = run_case(binary, case)
            if why is None:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {case['name']}: {why}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
