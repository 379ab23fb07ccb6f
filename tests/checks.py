"""The checks of the suite's Python tests: each says 'ok NAME' or 'FAIL NAME: why', and the
test ends with the plain 'N passed, N failed' line."""

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}" + (f": {detail}" if detail else ""))


def finish():
    """Prints the closing line; the exit status (1 when a check failed or none ran)."""
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0
