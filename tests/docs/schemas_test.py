#!/usr/bin/env python3
"""The JSON aml-launch writes is what its reference says: every --dry-run plan of the
repository's and the shared contract's cases against docs/reference/dry-run.schema.json, and the
--summary-file of real runs (a clean one, a failure, a stop, a restart) against
docs/reference/summary-file.schema.json. Both schemas close their top level: a field the
reference does not name fails here.

usage: schemas_test.py AML_LAUNCH [CASES.json ...]     Ends with 'N passed, N failed'.
"""
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import jsonschema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import checks  # noqa: E402
from checks import check  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def validator(name):
    with open(os.path.join(ROOT, "docs", "reference", name)) as f:
        return jsonschema.Draft202012Validator(json.load(f))


def errors(v, document):
    return "; ".join(f"{'/'.join(map(str, e.path)) or '(top)'}: {e.message[:160]}"
                     for e in v.iter_errors(document))


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(argv[0])
    files = argv[1:] or [os.path.join(ROOT, "tests", "fixtures", "dry_run_cases.json")]
    plan_schema = validator("dry-run.schema.json")
    plans = 0
    for path in files:
        for case in json.load(open(path)):
            if "expect" not in case:
                continue
            env = {"PATH": "/usr/local/bin:/usr/bin:/bin", **case.get("env", {})}
            done = subprocess.run([binary, "--dry-run", "--format", "json", *case.get("args", []),
                                   "--", "/bin/true"], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                check(f"plan of {case['name']}", False, done.stderr[-300:])
                continue
            problems = errors(plan_schema, json.loads(done.stdout))
            plans += 1
            if problems:
                check(f"plan of {case['name']} follows dry-run.schema.json", False, problems)
    check(f"{plans} --dry-run plans follow dry-run.schema.json", plans > 20 and checks.failed == 0)

    summary_schema = validator("summary-file.schema.json")
    work = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, work, True)
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "TMPDIR": work}
    runs = {
        "a clean run": ["--nproc-per-node", "2", "--", "true"],
        "a failure": ["--nproc-per-node", "2", "--", "sh", "-c", '[ "$RANK" = 1 ] && exit 3; sleep 30'],
        "a restart, then a failure": ["--nproc-per-node", "2", "--max-restarts", "1", "--", "sh", "-c",
                                      'echo oops >&2; exit 5'],
    }
    for name, args in runs.items():
        path = os.path.join(work, name.replace(" ", "_") + ".json")
        subprocess.run([binary, "--summary-file", path, *args], env=env, capture_output=True, timeout=60)
        document = json.load(open(path))
        check(f"--summary-file of {name} follows summary-file.schema.json", not errors(summary_schema, document),
              errors(summary_schema, document))
    path = os.path.join(work, "stop.json")
    launcher = subprocess.Popen([binary, "--nproc-per-node", "2", "--summary-file", path, "--", "sleep", "30"],
                                env=env, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    launcher.send_signal(signal.SIGTERM)
    launcher.wait(timeout=60)
    document = json.load(open(path))
    check("--summary-file of a stop follows summary-file.schema.json, with its stop",
          not errors(summary_schema, document) and document["stopped"] is not None, errors(summary_schema, document))
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
