"""A newcomer's walk through the docs, step by step, as tests/docs/walk_*.py take it: each step
is a block (or a line) of README.md or a guide, found by a line in it and run as written, in a
folder of the walk's own with a train.py, with what the walker installed on PATH. An env block
(export VAR=value ..., then aml-launch) runs as the reader types it, and the output block after
it is checked as the docs test does. The binaries are the release's (the suite's release
fixture: scripts/release.sh built them once for every test that needs them)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import docs_test  # noqa: E402  (its block reader and output check: one of each)
import checks  # noqa: E402
from checks import check  # noqa: E402

ROOT = docs_test.ROOT

# The training script of every walk: a torch gloo job that takes any flags (--batch_size=32 ...).
TRAIN = open(os.path.join(HERE, "gloo_train.py")).read()

# A worker that fails as logs-and-failures.md's example does: rank 1, exit 9, a last stderr line.
FAIL = """import os, sys, time
if os.environ["RANK"] == "1":
    print("CUDA error: out of memory", file=sys.stderr, flush=True)
    sys.exit(9)
time.sleep(60)
"""


class Walk:
    def __init__(self, person):
        self.person = person
        self.work = tempfile.mkdtemp(prefix="walk-")
        self.bin = os.path.join(self.work, "bin")
        os.makedirs(self.bin)
        for name, text in (("train.py", TRAIN), ("fail.py", FAIL)):
            with open(os.path.join(self.work, name), "w") as f:
                f.write(text)
        self.path = [self.bin]
        self.started = time.monotonic()
        print(f"== {person}")

    def env(self):
        # TMPDIR: what torchrun, torch and the launcher leave there goes with the walk's folder.
        return {"PATH": ":".join(self.path + ["/usr/local/bin", "/usr/bin", "/bin"]), "HOME": self.work,
                "TMPDIR": self.work, "LANG": "C.UTF-8"}

    def close(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def seconds(self):
        return time.monotonic() - self.started

    def block(self, page, line):
        """The text of the block of PAGE (a path from the root) that has LINE, and the output
        block after it (or None)."""
        found = docs_test.blocks(os.path.join(ROOT, page))
        for i, (_, _, marker, text) in enumerate(found):
            if line in (entry.strip() for entry in text.split("\n")):
                after = found[i + 1] if i + 1 < len(found) else None
                output = after[3] if after and after[2] == "output" else None
                return text, output
        check(f"{page} has the line `{line}`", False, "the walk follows the docs as written")
        return None, None

    def run(self, what, page, line, expect_status=0, timeout=120):
        """Runs the block of PAGE that has LINE, as written; what it printed, or None."""
        text, output = self.block(page, line)
        if text is None:
            return None
        done = subprocess.run(["bash", "-c", text], cwd=self.work, env=self.env(), capture_output=True,
                              text=True, timeout=timeout)
        printed = done.stdout + done.stderr
        check(f"{self.person}: {what} ({page}: `{line[:60]}`; exit {done.returncode})",
              done.returncode == expect_status, printed[-1200:])
        if output is not None:
            docs_test.check_output(f"{self.person}: {what}: {page}'s output block", output, printed)
        return printed

    def run_line(self, what, page, line, expect_status=0, timeout=120):
        """Runs LINE alone, a line of a block of PAGE (its comment left out); what it printed."""
        text, _ = self.block(page, line)
        if text is None:
            return None
        command = re.sub(r"\s+#.*$", "", line)
        done = subprocess.run(["bash", "-c", command], cwd=self.work, env=self.env(), capture_output=True,
                              text=True, timeout=timeout)
        printed = done.stdout + done.stderr
        check(f"{self.person}: {what} (`{command[:70]}`; exit {done.returncode})",
              done.returncode == expect_status, printed[-1200:])
        return printed

    def first_run(self, page, line):
        """The first 2-worker torch run: both ranks all-reduce; the time from the walk's start."""
        printed = self.run_line("the first 2-worker torch run", page, line)
        ranks = printed and all(f"rank {r} of 2: all_reduce 3" in printed for r in (0, 1))
        check(f"{self.person}: both workers ran the torch gloo all_reduce "
              f"({self.seconds():.1f} s from the walk's start)", ranks, (printed or "")[-800:])

    def failure_named(self, command):
        """A failing rank, named as logs-and-failures.md shows it: rank, node, host, pid, time,
        status, and the last line of its stderr; the launcher exits with the rank's status."""
        example = next((text for _, _, _, text in docs_test.blocks(os.path.join(ROOT, "docs/guides/logs-and-failures.md"))
                        if "failed first at" in text), "")
        check(f"{self.person}: logs-and-failures.md shows a failure", "failed first at" in example)
        done = subprocess.run(["bash", "-c", command], cwd=self.work, env=self.env(), capture_output=True,
                              text=True, timeout=120)
        printed = done.stdout + done.stderr
        # The guide's lines, with what differs from run to run (host, pid, time) as a pattern.
        wanted = []
        for line in example.split("\n"):
            pattern = re.escape(line.strip())
            pattern = re.sub(r"host\\-3", r"[^)]+", pattern)
            pattern = re.sub(r"pid\\ 4242", r"pid\\ [0-9]+", pattern)
            pattern = re.sub(r"2026\\-11\\-22T[0-9:.\\]+Z", r"[0-9T:.Z-]+", pattern)
            wanted.append(pattern)
        missing = [w for w in wanted if w and not re.search(w, printed)]
        check(f"{self.person}: a failed rank is named as logs-and-failures.md shows (`{command}`; "
              f"exit {done.returncode})", done.returncode == 9 and not missing and example,
              f"not printed: {missing}; printed:\n{printed[-1200:]}")


def main(person, steps):
    """A walk script's whole run: steps(walk, dist) with DIST from the command line, then the
    closing line; the exit status."""
    if len(sys.argv) != 2:
        print(sys.modules["__main__"].__doc__, file=sys.stderr)
        return 2
    walk = Walk(person)
    try:
        steps(walk, os.path.abspath(sys.argv[1]))
    finally:
        walk.close()
    return checks.finish()
