#!/usr/bin/env python3
"""The README's test command must pass in a clone with nothing beside it: no script or build file
of the suite may look up a path outside the repository, except where it is marked optional
("outside-the-repository: optional", on that line or the one before) and then checks the same
thing with what the repository carries when the path is not there.

Found: a ../shared lookup, ${PROJECT_SOURCE_DIR}/.. or ${CMAKE_SOURCE_DIR}/.., or more "../" in a
row than the file's own folder is deep (a path relative to the file's folder that climbs out of
the repository). Comment lines are not lookups.
usage: self_contained_test.py REPO_ROOT     (ends with 'N passed, N failed')
"""
import os
import re
import subprocess
import sys

MARKER = "outside-the-repository: optional"
SUFFIXES = (".sh", ".py", ".cmake", "CMakeLists.txt", ".cpp", ".hpp", ".c")
LEAVES = re.compile(r"\.\./shared|(PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/\.\.")
CLIMB = re.compile(r"(?:\.\./)+(?:\.\.)?")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout
        return out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        found = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build")]
            found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
        return found


def leaks_in(path, text):
    depth = path.count("/")
    previous, leaks, marked = "", [], []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.strip()
        if code.startswith("#") or code.startswith("//"):
            previous = line
            continue
        climbs = max((m.group(0).count("..") for m in CLIMB.finditer(code)), default=0)
        if LEAVES.search(code) or climbs > depth:
            (marked if MARKER in line + previous else leaks).append(f"{path}:{number}: {code}")
        previous = line
    return leaks, marked


def main(root):
    passed = failed = scanned = 0
    leaks, marked = [], []
    for path in tracked_files(root):
        if not path.endswith(SUFFIXES) or not os.path.isfile(os.path.join(root, path)):
            continue
        if path == "tests/repo/self_contained_test.py":  # names the patterns it looks for
            continue
        scanned += 1
        with open(os.path.join(root, path), errors="replace") as f:
            found, optional = leaks_in(path, f.read())
        leaks += found
        marked += optional

    def check(name, ok):
        nonlocal passed, failed
        print(("ok   " if ok else "FAIL ") + name)
        passed, failed = passed + ok, failed + (not ok)

    check(f"the suite's scripts and build files were read ({scanned} files)", scanned > 50)
    for m in marked:
        print("  optional, marked:", m)
    check(f"no unmarked lookup outside the repository ({len(leaks)} found)", not leaks)
    for leak in leaks:
        print("  ", leak)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
