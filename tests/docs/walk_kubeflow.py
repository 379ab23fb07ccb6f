#!/usr/bin/env python3
"""A Kubeflow PyTorchJob user walks README.md, containers.md and kubernetes.md as written: puts
the one file on the image's PATH as containers.md's Dockerfile does (COPY to /usr/local/bin;
here a folder on PATH), runs README's first 2-worker torch line, reads the plan of the Worker
pod with the variables Kubeflow's operator sets, and meets a failed rank, named, whose exit
status kubernetes.md tells restartPolicy ExitCode to retry or not.
usage: walk_kubeflow.py DIST      (DIST: scripts/release.sh's output)   Ends with 'N passed, N failed'."""
import os
import shutil
import sys

import walk as walks
from walk import ROOT, check


def steps(walk, dist):
    arch = os.uname().machine
    dockerfile = open(os.path.join(ROOT, "examples/containers/Dockerfile")).read()
    check("containers.md's Dockerfile copies the one file onto the image's PATH",
          "COPY aml-launch-x86_64 /usr/local/bin/aml-launch" in dockerfile)
    source = os.path.join(dist, f"aml-launch-{arch}")
    if os.path.exists(source):
        shutil.copy(source, os.path.join(walk.bin, "aml-launch"))
    walk.first_run("README.md", "aml-launch --nproc-per-node 2 train.py  # train.py on 2 workers")
    walk.run("the Worker pod's plan", "docs/guides/kubernetes.md",
             "aml-launch --require-auth --term-timeout 110 --nproc-per-node 8 --dry-run -- python train.py")
    guide = open(os.path.join(ROOT, "docs/guides/kubernetes.md")).read()
    check("kubernetes.md says which exit statuses restartPolicy ExitCode retries",
          "ExitCode" in guide)
    walk.failure_named("aml-launch --nproc-per-node 2 fail.py")


if __name__ == "__main__":
    sys.exit(walks.main("Kubeflow", steps))
