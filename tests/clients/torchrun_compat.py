#!/usr/bin/env python3
"""torchrun's own command lines under aml-launch, against the real torchrun.

Each command line runs under Debian's torchrun (torch 1.13, through benchmarks/torchrun_fixed.py,
which mends its one Python 3.11 crash) and again with only the program's name changed to
aml-launch. Every rank records its argv and its rank variables; both runs must exit 0 with the
same ranks, argv and variables. torch 1.13 spells its flags with underscores only: a command
line in the newer hyphen spelling runs under 1.13 with its underscore twin.

Where aml-launch means to differ, the check says so: a run id of its own where torchrun's is
"none" or a random one, 127.0.0.1 where torchrun names this host, a free port where torchrun
picks one too, TORCHELASTIC_USE_AGENT_STORE=True (the launcher serves torch's store; torchrun
1.13's c10d backend has rank 0's worker host it). A failing rank: torchrun exits 1, aml-launch the rank's own status.

usage: torchrun_compat.py AML_LAUNCH     (run by /usr/bin/python3, where Debian's torch is)
Ends with 'N passed, N failed'.
"""
import fcntl
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import checks  # noqa: E402
from checks import check  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TORCHRUN = [sys.executable, os.path.join(HERE, "..", "..", "benchmarks", "torchrun_fixed.py")]
RANK_VARIABLES = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                  "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME",
                  "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "OMP_NUM_THREADS"]
RECORDER = """import json, os, sys
argv = sys.argv[2:] if sys.argv[1:2] == ["--as"] else sys.argv
names = %r + ["MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE"]
# Whole or not there: a rank stopped by another's failure (fail-fast) may die mid-write.
path = os.path.join(os.environ["RECORD"], os.environ["RANK"] + ".json")
with open(path + ".part", "w") as f:
    json.dump({"argv": argv, "env": {n: os.environ.get(n) for n in names}}, f)
os.replace(path + ".part", path)
if os.environ.get("FAIL_RANK") == os.environ["RANK"]:
    sys.exit(3)
""" % RANK_VARIABLES



def reserve_port(held):
    """A loopback port of this test alone, below the ephemeral range, as assert.sh's reserve_port
    keeps one: a lock file every test of the suite respects, held until this test exits."""
    os.makedirs("/tmp/aml-launch-test-ports", exist_ok=True)
    for _ in range(200):
        port = random.randint(10000, 32000)
        f = open(f"/tmp/aml-launch-test-ports/{port}", "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with socket.socket() as s:
                s.bind(("", port))
        except OSError:
            f.close()
            continue
        held.append(f)
        return port
    raise RuntimeError("no free port")


def run(launcher, words, work, tag, extra_env=None):
    record = os.path.join(work, tag)
    os.makedirs(record)
    # TMPDIR: torchrun leaves a torchelastic_* folder of logs there.
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "TMPDIR": work, "RECORD": record, **(extra_env or {})}
    done = subprocess.run(launcher + words, cwd=work, env=env, capture_output=True, text=True,
                          timeout=180)
    ranks = {}
    for name in os.listdir(record):
        if not name.endswith(".json"):
            continue  # a record its rank did not finish (stopped by another rank's failure)
        with open(os.path.join(record, name)) as f:
            ranks[int(name.split(".")[0])] = json.load(f)
    return done, ranks


def loopback(host):
    try:
        return socket.gethostbyname(host).startswith("127.")
    except OSError:
        return False


def compare(name, words, torch_words, aml, work, static=False, given_id=None, given_addr=None,
            given_port=None):
    t, t_ranks = run(TORCHRUN, torch_words, work, name + ".torchrun")
    a, a_ranks = run(aml, words, work, name + ".aml-launch")
    check(f"{name}: torchrun and aml-launch both exit 0 ({t.returncode}, {a.returncode})",
          t.returncode == 0 and a.returncode == 0, (t.stderr[-600:] + a.stderr[-600:]).strip())
    check(f"{name}: the same ranks ({sorted(a_ranks)})",
          sorted(t_ranks) == sorted(a_ranks) and len(a_ranks) > 0, f"torchrun {sorted(t_ranks)}")
    wrong = []
    for rank in sorted(set(t_ranks) & set(a_ranks)):
        tr, ar = t_ranks[rank], a_ranks[rank]
        if tr["argv"] != ar["argv"]:
            wrong.append(f"rank {rank} argv {ar['argv']} (torchrun {tr['argv']})")
        for variable in RANK_VARIABLES:
            if tr["env"][variable] != ar["env"][variable]:
                wrong.append(f"rank {rank} {variable}={ar['env'][variable]} "
                             f"(torchrun {tr['env'][variable]})")
        te, ae = tr["env"], ar["env"]
        if given_addr and not (te["MASTER_ADDR"] == ae["MASTER_ADDR"] == given_addr):
            wrong.append(f"MASTER_ADDR={ae['MASTER_ADDR']} (torchrun {te['MASTER_ADDR']})")
        if not given_addr and not (loopback(te["MASTER_ADDR"]) and loopback(ae["MASTER_ADDR"])):
            wrong.append(f"MASTER_ADDR={ae['MASTER_ADDR']}, torchrun's {te['MASTER_ADDR']}: "
                         "both should name this host")
        if given_port and not (te["MASTER_PORT"] == ae["MASTER_PORT"] == str(given_port)):
            wrong.append(f"MASTER_PORT={ae['MASTER_PORT']} (torchrun {te['MASTER_PORT']})")
        if not 0 < int(ae["MASTER_PORT"] or 0) < 65536:
            wrong.append(f"MASTER_PORT={ae['MASTER_PORT']}")
        if given_id and not (te["TORCHELASTIC_RUN_ID"] == ae["TORCHELASTIC_RUN_ID"] == given_id):
            wrong.append(f"TORCHELASTIC_RUN_ID={ae['TORCHELASTIC_RUN_ID']} "
                         f"(torchrun {te['TORCHELASTIC_RUN_ID']})")
        if not given_id and ae["TORCHELASTIC_RUN_ID"] in (None, "", "none"):
            wrong.append(f"TORCHELASTIC_RUN_ID={ae['TORCHELASTIC_RUN_ID']}: a run id of its own")
        if ae["TORCHELASTIC_USE_AGENT_STORE"] != "True":
            wrong.append(f"TORCHELASTIC_USE_AGENT_STORE={ae['TORCHELASTIC_USE_AGENT_STORE']}: "
                         "every rank a client of the launcher's store")
    ports = {r["env"]["MASTER_PORT"] for r in a_ranks.values()}
    if len(ports) != 1:
        wrong.append(f"the ranks have different MASTER_PORTs {ports}")
    check(f"{name}: every rank's argv and variables as torchrun's", not wrong, "; ".join(wrong))


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    aml = [os.path.abspath(argv[0])]
    work = tempfile.mkdtemp()
    held = []
    try:
        for script in ("train.py", "elastic_ddp.py", "fail.py", "script_without_suffix"):
            with open(os.path.join(work, script), "w") as f:
                f.write(RECORDER)
        os.makedirs(os.path.join(work, "mypkg"))
        open(os.path.join(work, "mypkg", "__init__.py"), "w").close()
        shutil.copy(os.path.join(work, "train.py"), os.path.join(work, "mypkg", "train.py"))
        with open(os.path.join(work, "run.sh"), "w") as f:
            f.write('#!/bin/sh\nexec /usr/bin/python3 "$(dirname "$0")/train.py" --as "$0" "$@"\n')
        os.chmod(os.path.join(work, "run.sh"), 0o755)
        static_port, elastic_port = reserve_port(held), reserve_port(held)
        logs = os.path.join(work, "logs")
        cases = [
            # (name, aml-launch's words, torch 1.13's words or None for the same, what is given)
            ("nanoGPT's README", ["--standalone", "--nproc_per_node=2", "train.py",
                                  "--batch_size=32", "--compile=False"], None, {}),
            ("a job script's static rendezvous",
             ["--nproc_per_node=2", "--nnodes=1", "--node_rank=0", "--master_addr=127.0.0.1",
              f"--master_port={static_port}", "train.py", "--lr", "0.1"], None,
             {"static": True, "given_addr": "127.0.0.1", "given_port": static_port}),
            ("PyTorch's elastic tutorial",
             ["--nnodes=1:1", "--nproc_per_node=2", "--rdzv_id=100", "--rdzv_backend=c10d",
              f"--rdzv_endpoint=127.0.0.1:{elastic_port}", "elastic_ddp.py"], None,
             {"given_id": "100"}),
            ("a wrapper script with --no_python",
             ["--no_python", "--nproc_per_node=2", "./run.sh", "x", "y"], None, {"static": True}),
            ("torch 2's spelling, a module",
             ["--nproc-per-node", "2", "-m", "mypkg.train", "--config", "a.toml"],
             ["--nproc_per_node", "2", "-m", "mypkg.train", "--config", "a.toml"],
             {"static": True}),
            ("torch 2's spelling, flags with no use here",
             ["--nproc-per-node", "2", "--max-restarts", "0", "--monitor-interval", "1", "train.py"],
             ["--nproc_per_node", "2", "--max_restarts", "0", "--monitor_interval", "1", "train.py"],
             {"static": True}),
            ("a role, restarts allowed, the program's own -- and flags",
             ["--nproc_per_node", "3", "--role", "trainer", "--max_restarts=2", "train.py", "--",
              "--nproc_per_node=9", "-m"], None, {"static": True}),
            # --local_ranks_filter came after torch 1.13, which runs without it.
            ("log files, redirects, the start method, a console filter",
             ["--nproc_per_node=2", "--log_dir", logs, "-r", "3", "-t=0", "--start_method=fork",
              "--local_ranks_filter=0", "train.py"],
             ["--nproc_per_node=2", "--log_dir", logs, "-r", "3", "-t=0", "--start_method=fork",
              "train.py"], {"static": True}),
            ("a Python script without .py that cannot be run itself",
             ["--nproc_per_node", "2", "script_without_suffix", "a"], None, {"static": True}),
            ("--run_path and the torch 2 hyphens of --master-addr and --master-port",
             ["--run-path", "--nproc-per-node=2", "--master-addr", "127.0.0.1",
              f"--master-port={static_port}", os.path.join(work, "train.py")],
             ["--run_path", "--nproc_per_node=2", "--master_addr", "127.0.0.1",
              f"--master_port={static_port}", os.path.join(work, "train.py")],
             {"static": True, "given_addr": "127.0.0.1", "given_port": static_port}),
        ]
        for name, words, torch_words, given in cases:
            compare(name, words, torch_words or words, aml, work, **given)
        # A failure: torchrun says 1 whatever the rank said; aml-launch passes the rank's on.
        t, _ = run(TORCHRUN, ["--nproc_per_node=2", "fail.py"], work, "fail.torchrun",
                   {"FAIL_RANK": "1"})
        a, _ = run(aml, ["--nproc_per_node=2", "fail.py"], work, "fail.aml-launch",
                   {"FAIL_RANK": "1"})
        check(f"rank 1 exits 3: torchrun exits 1 ({t.returncode}), aml-launch 3 ({a.returncode})",
              t.returncode == 1 and a.returncode == 3, a.stderr[-400:])
        check("rank 1 exits 3: aml-launch names rank 1 and its exit code",
              "rank 1" in a.stderr and "exit code 3" in a.stderr, a.stderr[-400:])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
