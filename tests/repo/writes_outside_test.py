#!/usr/bin/env python3
"""No script of the suite, its benchmarks or its tools points a tool that writes at a path of the
machine's own (DESIGN §7): zsh's compinit -d, an in-place edit (sed -i, perl -i), a rename or
install over a file, or a redirection into /etc or /dev (other than /dev/null, /dev/stderr, ...).
Those tools write beside the file and rename over it: compinit -d /dev/null turned the device
into a regular file. scripts/test.sh's machine check finds what a run changed; this finds the
line that would, in scripts the suite does not run (benchmarks, examples) too.
A line that must touch the machine, by design, says "machine-repair: by design" (on it or the one
before); none does today (scripts/restore-devices.sh names its device through a variable).
usage: writes_outside_test.py REPO_ROOT     (ends with 'N passed, N failed')
"""
import os
import re
import subprocess
import sys

FOLDERS = ("tests", "scripts", "benchmarks", "examples", "docker", ".ci", "packaging")
SUFFIXES = (".sh", ".py", ".bash", "Dockerfile", "run")
MARKER = "machine-repair: by design"
MACHINE = r"/(?:etc|dev|usr|var/lib|boot|lib|bin|sbin)/"
RULES = [
    ("compinit's dump outside a folder of the test's own", re.compile(r"compinit\b.*-d\s+['\"]?/(?!tmp)")),
    ("an in-place edit of the machine's file", re.compile(r"\b(?:sed|perl)\s+(?:-\w+\s+)*-i\S*\s.*" + MACHINE)),
    ("a rename, copy or install onto the machine's file",  # the last argument: the target
     re.compile(r"\b(?:mv|install|cp|ln)\s[^|;&>]*\s['\"]?" + MACHINE + r"[^\s'\";|&]*['\"]?\s*(?:$|[;|&>)])")),
    ("a file written into /etc or /dev",
     re.compile(r">>?\s*['\"]?/(?:etc/|dev/(?!null\b|stderr\b|stdout\b|tty\b|fd/))")),
    ("ip netns exec's /etc/netns (the machine's /etc)", re.compile(r"/etc/netns")),
]


def files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", *FOLDERS],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    # This file's rules, and the machine check's test, whose copies of the machine are its subject.
    return [f for f in out if f.endswith(SUFFIXES) and f != "tests/repo/writes_outside_test.py"
            and not f.startswith("tests/machine/")]


def findings(root, names):
    found = []
    for name in names:
        try:
            with open(os.path.join(root, name), errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for i, line in enumerate(lines):
            code = line.strip()
            if code.startswith("#") or MARKER in line or (i and MARKER in lines[i - 1]):
                continue
            for what, rule in RULES:
                if rule.search(code):
                    found.append(f"{name}:{i + 1}: {what}: {code[:120]}")
    return found


def self_test():
    """Each rule finds what it is for, and leaves alone what a test may do."""
    bad = ["autoload -Uz compinit && compinit -u -d /dev/null", "sed -i 's/a/b/' /etc/hosts",
           "mv -f \"$tmp\" /etc/resolv.conf", "cp hosts /etc/hosts && true", "echo x > /etc/hosts", "mkdir -p /etc/netns/x"]
    good = ["compinit -u -d \"$WORK/zcompdump\"", "cmd >/dev/null 2>&1", "echo x >&2",
            "sed -i 's/a/b/' \"$WORK/conf\"", "mv -f \"$1.part\" \"$1\"", "cat /etc/hosts",
            "ln -s /lib/x86_64-linux-gnu/ld-2.31.so \"$ROOT/lib64/ld.so\""]
    hits = lambda line: [w for w, r in RULES if r.search(line)]
    return [f"missed: {b}" for b in bad if not hits(b)] + [f"wrongly found: {g}" for g in good if hits(g)]


def main():
    root = sys.argv[1]
    passed = failed = 0
    for problem in self_test():
        print(f"FAIL the rules themselves: {problem}")
        failed += 1
    if not failed:
        print("ok   each rule finds its kind of write and leaves a test's own alone")
        passed += 1
    names = files(root)
    found = findings(root, names)
    for line in found:
        print(f"FAIL {line}")
    if found:
        failed += 1
    else:
        print(f"ok   no script writes at a path of the machine's own ({len(names)} files)")
        passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
