"""How an armed JAX worker ends (python/aml_launch/jax_cluster.py), without JAX: each case is a
Python process that registers a stand-in for JAX's shutdown barrier at exit (it prints
"barrier"), arms the cluster environment as initialize() does, then ends one way. A failed
process must end with its status before the barrier; a process that ends well, or catches its
own sys.exit, must reach the barrier and end as Python would.
usage: jax_exit_test.py JAX_CLUSTER_PY PYTHON..."""
import subprocess
import sys
import time

PRELUDE = """
import atexit, importlib.util, sys, threading
atexit.register(lambda: print("barrier", flush=True))  # JAX's, registered at `import jax`
spec = importlib.util.spec_from_file_location("jax_cluster", sys.argv[1])
cluster = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cluster)
cluster._arm()  # as get_process_count() does in initialize()
"""

# name, how the process ends, its exit status, whether it reached the barrier
CASES = [
    ("sys.exit(3) in a function", "def main():\n    sys.exit(3)\nmain()", 3, False),
    ("exit(5), site's builtin", "exit(5)", 5, False),
    ("quit(6), site's builtin", "quit(6)", 6, False),
    ("sys.exit('a message'): status 1", "sys.exit('a message')", 1, False),
    ("sys.exit(-1): status 255", "sys.exit(-1)", 255, False),
    ("an exception nobody catches", "raise RuntimeError('gives up')", 1, False),
    ("sys.exit(0)", "sys.exit(0)", 0, True),
    ("sys.exit()", "sys.exit()", 0, True),
    ("the end of the program", "pass", 0, True),
    ("sys.exit(256): 0, as Python ends it", "sys.exit(256)", 0, True),
    ("sys.exit(4) caught, then the end", "try:\n    sys.exit(4)\nexcept SystemExit:\n    pass", 0, True),
    ("sys.exit(4) caught and kept, then the end",
     "try:\n    sys.exit(4)\nexcept SystemExit as e:\n    kept = e", 0, True),
    ("sys.exit(4) caught in a function, then sys.exit(2)",
     "def f():\n    try:\n        sys.exit(4)\n    except SystemExit:\n        pass\nf()\nsys.exit(2)", 2,
     False),
    ("sys.exit(7) in a thread ends the thread only",
     "t = threading.Thread(target=sys.exit, args=(7,))\nt.start()\nt.join()", 0, True),
]

passed = failed = 0
for python in sys.argv[2:]:
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True).stdout.strip()
    for name, ending, status, barrier in CASES:
        started = time.monotonic()
        run = subprocess.run([python, "-c", PRELUDE + ending, sys.argv[1]], capture_output=True,
                             text=True, timeout=60)
        took = time.monotonic() - started
        reached = "barrier" in run.stdout
        ok = run.returncode == status and reached == barrier
        if ok and status == 1 and "message" in ending:
            ok = "a message" in run.stderr  # Python printed it before the end
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'ok  ' if ok else 'FAIL'} python {version}, {name}: exit {run.returncode}"
              f" (wanted {status}), barrier {'reached' if reached else 'skipped'}, {took:.2f} s")
        if not ok:
            print(run.stdout + run.stderr)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
