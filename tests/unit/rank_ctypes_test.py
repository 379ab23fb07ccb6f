"""The rank library's C ABI through Python ctypes, in fresh processes with chosen environments."""
import os
import subprocess
import sys

LIB = sys.argv[1]
PROBE = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.aml_source.restype = ctypes.c_char_p
lib.aml_topology_error.restype = ctypes.c_char_p
err = lib.aml_topology_error()
print(lib.aml_source().decode(), lib.aml_rank(), lib.aml_world_size(), lib.aml_local_rank(),
      lib.aml_node_rank(), lib.aml_is_master(), err.decode() if err else "none")
"""

CASES = [
    ("no distributed environment", {}, "standalone 0 1 0 0 1 none"),
    ("Open MPI rank 5 of 8", {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8",
                              "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
                              "MASTER_ADDR": "m"}, "openmpi 5 8 1 1 0 none"),
    ("TF chief is master", {"TF_CONFIG": '{"cluster": {"chief": ["c:1"], "worker": ["w:1"]}, '
                                         '"task": {"type": "chief", "index": 0}}'}, "tf-config 0 2 0 0 1 none"),
    ("TF worker 0 is not master when a chief exists",
     {"TF_CONFIG": '{"cluster": {"chief": ["c:1"], "worker": ["w:1"]}, "task": {"type": "worker", "index": 0}}'},
     "tf-config 1 2 0 1 0 none"),
    ("broken environment", {"RANK": "9", "WORLD_SIZE": "2"},
     " -1 -1 -1 -1 0 aml: RANK=9: expected a rank below WORLD_SIZE=2"),
]

failed = 0
for name, env, want in CASES:
    full = {"PATH": "/usr/bin:/bin", **env}
    got = subprocess.run([sys.executable, "-c", PROBE, LIB], env=full, capture_output=True, text=True)
    line = got.stdout.strip()
    if got.returncode != 0 or line != want.strip() and line != want:
        failed += 1
        print(f"FAIL {name}: got {line!r} (stderr {got.stderr.strip()!r}), wanted {want!r}")
    else:
        print(f"ok   {name}")
print(f"{len(CASES) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
