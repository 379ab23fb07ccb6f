"""The rank topology of tests/unit/rank_cases.json, read in fresh processes with exactly those
environments, through one of the rank library's faces:

  rank_cases_test.py probe RANK_C_ABI_PROBE   the C ABI, from C
  rank_cases_test.py ctypes LIBAML_RANK       the C ABI, from Python ctypes
  rank_cases_test.py package PYTHON           `import aml_launch` (the wheel), in that interpreter

Each face reports the same fields; a broken environment must give the error's message (for the
package: TopologyError, and is_master() False)."""
import json
import os
import subprocess
import sys

CASES = json.load(open(os.path.join(os.path.dirname(__file__), "rank_cases.json")))
FIELDS = ["source", "rank", "local_rank", "world_size", "local_world_size", "node_rank", "is_master"]

CTYPES = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
lib.aml_source.restype = lib.aml_topology_error.restype = ctypes.c_char_p
err = lib.aml_topology_error()
print(json.dumps({"source": lib.aml_source().decode(), "rank": lib.aml_rank(),
    "local_rank": lib.aml_local_rank(), "world_size": lib.aml_world_size(),
    "local_world_size": lib.aml_local_world_size(), "node_rank": lib.aml_node_rank(),
    "is_master": bool(lib.aml_is_master()), "error": err.decode() if err else None}))
"""

PACKAGE = r"""
import json, aml_launch
out = {"is_master": aml_launch.is_master()}
try:
    t = aml_launch.topology()
    out.update({k: t[k] for k in ("source", "rank", "local_rank", "world_size", "local_world_size", "node_rank")})
    assert t["is_master"] == out["is_master"], "topology()['is_master'] differs from is_master()"
    assert (aml_launch.rank(), aml_launch.world_size(), aml_launch.local_rank(), aml_launch.local_world_size(),
            aml_launch.node_rank()) == (t["rank"], t["world_size"], t["local_rank"], t["local_world_size"],
            t["node_rank"]), "the functions differ from topology()"
    out["error"] = None
except aml_launch.TopologyError as e:
    try:
        aml_launch.rank()
        raise AssertionError("rank() did not raise TopologyError as topology() did")
    except aml_launch.TopologyError as again:
        assert str(again) == str(e)
    out["error"] = str(e)
print(json.dumps(out))
"""


def probe(case):
    # A clean environment: only the case's variables (and PATH) decide.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **case["env"]}
    if mode == "probe":
        cmd = [target]
    elif mode == "ctypes":
        cmd = [sys.executable, "-c", CTYPES, target]
    else:
        cmd = [target, "-c", PACKAGE]
    got = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if got.returncode != 0:
        return None, f"exit {got.returncode}: {got.stderr.strip()[-400:]}"
    line = got.stdout.strip()
    if mode == "probe":  # key=value pairs; the error is the rest of the line
        head, _, error = line.partition(" error=")
        out = dict(pair.split("=", 1) for pair in head.split())
        out = {k: (v if k == "source" else int(v)) for k, v in out.items()}
        out["is_master"] = bool(out["is_master"])
        out["error"] = None if error == "none" else error
        return out, None
    return json.loads(line), None


def mismatches(case, got):
    want = case["expect"]
    wrong = []
    if "error" in want:
        # The C ABI says "aml: <message>"; the package's TopologyError is the message itself.
        if not got["error"] or not got["error"].endswith(want["error"]):
            wrong.append(f"error {got['error']!r}, wanted one ending in {want['error']!r}")
    elif got["error"]:
        wrong.append(f"error {got['error']!r}")
    for field in FIELDS:
        if field in want and got.get(field) != want[field]:
            wrong.append(f"{field}={got.get(field)!r}, wanted {want[field]!r}")
    return wrong


mode, target = sys.argv[1], sys.argv[2]
failed = 0
for case in CASES:
    got, error = probe(case)
    wrong = [error] if error else mismatches(case, got)
    if wrong:
        failed += 1
        print(f"FAIL {case['name']}: " + "; ".join(wrong))
    else:
        print(f"ok   {case['name']}")
print(f"{len(CASES) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
