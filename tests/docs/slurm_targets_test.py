#!/usr/bin/env python3
"""observability.md's Slurm block (a batch script writing Prometheus' targets file) runs as
written under every awk installed here: mawk (Debian's default), busybox's, and gawk where it is. Only
`scontrol show hostnames` (it needs a Slurm controller) is replaced by the hosts it would print,
and the targets file by one in a temporary folder; the folder must hold nothing else after it
(a `>` that an awk reads as a redirection writes files there).
usage: slurm_targets_test.py        (ends with 'N passed, N failed')
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import checks  # noqa: E402
from checks import check  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GUIDE = os.path.join(ROOT, "docs", "guides", "observability.md")
HOSTS = ["gpu01", "gpu02", "gpu03"]


def the_block():
    text = open(GUIDE).read()
    found = re.search(r"<!-- doc-test: cluster: [^\n]*slurm_targets_test\.py[^\n]*-->\n```sh\n(.*?)```",
                      text, re.S)
    return found.group(1) if found else None


def awks():
    found = [(name, [name]) for name in ("gawk", "mawk") if shutil.which(name)]
    if shutil.which("busybox"):
        found.append(("busybox awk", ["busybox", "awk"]))
    return found


block = the_block()
check("observability.md has the Slurm targets block, marked for this test", block is not None)
if block:
    for needed in ('scontrol show hostnames "$SLURM_JOB_NODELIST"', "/shared/prometheus/targets/aml-$SLURM_JOB_ID.json",
                   "\n  awk "):
        check(f"the block has {needed.strip()!r} where this test puts its stand-in", needed in block)
    installed = awks()
    check(f"mawk and busybox awk are here at least ({[n for n, _ in installed]})",
          {"mawk", "busybox awk"} <= {n for n, _ in installed})
    for name, command in installed:
        with tempfile.TemporaryDirectory() as folder:
            script = (block.replace('scontrol show hostnames "$SLURM_JOB_NODELIST"', "printf '%s\\n' " + " ".join(HOSTS))
                      .replace("/shared/prometheus/targets/aml-$SLURM_JOB_ID.json", '"$TARGETS"')
                      .replace("\n  awk ", "\n  $AWK ", 1))
            env = dict(os.environ, AWK=" ".join(command), SLURM_JOB_ID="4242",
                       TARGETS=os.path.join(folder, "targets.json"))
            run = subprocess.run(["bash", "-c", "set -o pipefail\n" + script], cwd=folder, env=env,
                                 capture_output=True, text=True, timeout=30)
            check(f"{name}: the block exits 0 ({run.stderr.strip()!r})", run.returncode == 0)
            try:
                targets = json.load(open(env["TARGETS"]))
            except (OSError, ValueError) as e:
                targets = repr(e)
            want = [{"labels": {"slurm_job": "4242"}, "targets": [h + ":9400" for h in HOSTS]}]
            check(f"{name}: the targets file is Prometheus' file_sd JSON of the job's hosts ({targets})",
                  targets == want)
            check(f"{name}: nothing else written in the folder ({sorted(os.listdir(folder))})",
                  sorted(os.listdir(folder)) == ["targets.json"])
sys.exit(checks.finish())
