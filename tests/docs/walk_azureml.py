#!/usr/bin/env python3
"""An Azure ML user who types `torchrun --nproc_per_node 8 train.py` today walks README.md and
its guides as written: gets aml-launch as the Azure ML guide's environment does (the wheel of
scripts/release.sh, pip-installed into the image's Python: here a new venv of Debian's Python,
which has torch), runs from-torchrun.md's first line on 2 workers, reads the plan of Azure ML's
node 1 with the variables its PyTorch distribution sets, and meets a failed rank, named.
usage: walk_azureml.py DIST      (DIST: scripts/release.sh's output)   Ends with 'N passed, N failed'."""
import glob
import os
import subprocess
import sys

import walk as walks
from walk import ROOT, check


def steps(walk, dist):
    dockerfile = open(os.path.join(ROOT, "examples/azureml/environment/Dockerfile")).read()
    check("azure-ml.md's environment installs the wheel scripts/release.sh built",
          "COPY aml_launch-*.whl /tmp/" in dockerfile and "/tmp/aml_launch-*.whl" in dockerfile)
    wheels = glob.glob(os.path.join(dist, f"aml_launch-*manylinux_2_17_{os.uname().machine}*.whl"))
    venv = os.path.join(walk.work, "venv")
    done = subprocess.run(f"/usr/bin/python3 -m venv --system-site-packages {venv} && "
                          f"{venv}/bin/pip install -q --no-index {wheels[0] if wheels else 'no-wheel'}",
                          shell=True, capture_output=True, text=True)
    check(f"{walk.person}: the wheel installs into the training Python (exit {done.returncode})",
          done.returncode == 0, done.stdout + done.stderr)
    walk.path.insert(0, os.path.join(venv, "bin"))
    walk.first_run("docs/guides/from-torchrun.md",
                   "aml-launch --standalone --nproc_per_node=2 train.py --batch_size=32")
    walk.run("node 1's plan under Azure ML's PyTorch distribution", "docs/guides/azure-ml.md",
             "aml-launch --require-auth --nproc-per-node 8 --dry-run -- python train.py --epochs 10")
    walk.failure_named("aml-launch --nproc_per_node=2 fail.py")


if __name__ == "__main__":
    sys.exit(walks.main("Azure ML, from torchrun", steps))
