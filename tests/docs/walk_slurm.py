#!/usr/bin/env python3
"""A Slurm user whose batch script runs `srun torchrun ... --rdzv_backend c10d` today walks
README.md and slurm.md as written: copies the one file into a folder the nodes share (~/bin),
runs README's first 2-worker torch line, reads the plan of node 1 of a 2-node step with the
variables srun sets, is told that a batch script without srun runs outside any step, and meets
a failed rank, named.
usage: walk_slurm.py DIST      (DIST: scripts/release.sh's output)   Ends with 'N passed, N failed'."""
import os
import shutil
import subprocess
import sys

import walk as walks
from walk import ROOT, check


def steps(walk, dist):
    single = f"dist/aml-launch-{os.uname().machine}"
    guide = open(os.path.join(ROOT, "docs/guides/slurm.md")).read()
    check(f"slurm.md says to copy {single} to a folder the nodes share (~/bin)",
          f"`{single}`" in guide and "`~/bin`" in guide)
    source = os.path.join(dist, os.path.basename(single))
    if os.path.exists(source):
        shutil.copy(source, os.path.join(walk.bin, "aml-launch"))  # HOME is the walk's folder
    walk.first_run("README.md", "aml-launch --nproc-per-node 2 train.py  # train.py on 2 workers")
    walk.run("node 1's plan in a 2-node step", "docs/guides/slurm.md",
             "aml-launch --nproc-per-node 8 --dry-run -- python train.py --epochs 10")
    # The batch script that forgot srun: the allocation's variables, no step's.
    done = subprocess.run("SLURM_JOB_ID=4242 SLURM_NNODES=2 SLURM_JOB_NODELIST='gpu[01-02]' "
                          "aml-launch --nproc-per-node 2 train.py", shell=True, cwd=walk.work,
                          env=walk.env(), capture_output=True, text=True, timeout=60)
    check(f"{walk.person}: a batch script without srun is refused as slurm.md says (exit {done.returncode})",
          done.returncode == 2 and "outside any job step" in done.stderr and "srun" in done.stderr
          and "SLURM_STEP_ID is not set: this runs in an allocation of 2 nodes (SLURM_NNODES=2) but" in guide,
          done.stderr[-600:])
    walk.failure_named("aml-launch --nproc-per-node 2 fail.py")


if __name__ == "__main__":
    sys.exit(walks.main("Slurm", steps))
