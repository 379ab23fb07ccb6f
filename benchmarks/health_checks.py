"""What a node's health checks cost (issue 62), and what they cost a job at scale.

1. On one node: `aml-launch --dry-run --format json` runs the checks as a round would; each
   check's time is read from its JSON, over AML_HEALTH_RUNS runs (20): 8 GPUs (the NVML stand-in
   of tests/health/, opened at run time as the driver is), 8 InfiniBand ports of a /sys tree of
   fixtures, a --health-path, a --health-command `true`.
2. The rendezvous of N nodes (as scale_nodes.py: N real launchers, one worker each, node 0's
   store on 127.0.0.1, a network namespace of their own), each node's checks on (8 GPUs of its
   own stand-in, 8 ports) against off (--health-checks none), alternating, AML_HEALTH_SCALE_RUNS
   runs each (3): from the last launcher's start until every worker ran.
3. An elastic job of 2:2 and a spare whose second node fails --health-command (the launchers
   started 0.1 s apart, in order): from the start of the launcher that fills the round (the
   spare) until both workers of the round (node 0's and the spare's) ran, beside the same job
   all healthy (from the second launcher's start; the third then waits as a spare).

usage: /usr/bin/python3 benchmarks/health_checks.py BUILD_DIR [N ...]   (as root; N: 1024)
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scale_nodes as sn  # noqa: E402  (its namespace, ports and waits)


def fixture_root(base, gpus=8, ports=8):
    """A machine root of GPUs' device files and InfiniBand ports, all well."""
    root = f"{base}/root"
    os.makedirs(f"{root}/dev")
    for i in range(gpus):
        open(f"{root}/dev/nvidia{i}", "w").close()
    for i in range(ports):
        at = f"{root}/sys/class/infiniband/mlx5_{i}/ports/1"
        os.makedirs(f"{at}/counters")
        for name, text in (("state", "4: ACTIVE"), ("phys_state", "5: LinkUp"),
                           ("rate", "400 Gb/sec (4X NDR)"), ("counters/link_downed", "0"),
                           ("counters/symbol_error", "0")):
            with open(f"{at}/{name}", "w") as f:
                f.write(text + "\n")
    with open(f"{base}/nvml", "w") as f:
        f.write(f"count {gpus}\n")
    return root


def checks_env(base, nvml):
    return {"AML_LAUNCH_HEALTH_ROOT": f"{base}/root", "AML_NVML_LIBRARY": nvml,
            "AML_NVML_STAND_IN": f"{base}/nvml"}


def one_node(aml, nvml, runs):
    base = tempfile.mkdtemp(prefix="aml-health-bench-")
    fixture_root(base)
    os.makedirs(f"{base}/scratch")
    env = dict(os.environ, **checks_env(base, nvml))
    times = {}
    whole = {"checks on": [], "checks off": []}
    for _ in range(runs):
        for label, flags in (("checks on", ["--health-checks", "gpu,nic,paths,command",
                                             "--health-path", f"{base}/scratch",
                                             "--health-command", "true"]),
                             ("checks off", ["--health-checks", "none"])):
            t0 = time.perf_counter()
            out = subprocess.run([aml, "--dry-run", "--format", "json", *flags, "--", "true"],
                                 env=env, capture_output=True, check=True, text=True).stdout
            whole[label].append(time.perf_counter() - t0)
            health = json.loads(out)["health"]
            assert label == "checks off" or health["healthy"], health
            for check in health["checks"]:
                times.setdefault(check["check"].split(" ")[0], []).append(check["seconds"])
            if label == "checks on":
                times.setdefault("all (as the node waits for them)", []).append(health["seconds"])
    shutil.rmtree(base, ignore_errors=True)
    return times, whole


def scale_run(aml, nvml, n, checks_on):
    """N fixed-size launchers meeting at node 0's store: last start until every worker ran."""
    work = tempfile.mkdtemp(prefix=f"aml-health-scale-{n}-")
    fixture_root(work)
    mark = f"{os.getpid()}-health-{n}"
    port = sn.free_port()
    env = {"PATH": "/usr/bin:/bin", "W": work, "AML_SCALE_MARK": mark, **checks_env(work, nvml)}
    worker = 'touch "$W/up.$RANK"; exec sleep 600'
    flags = ["--health-checks", "gpu,nic" if checks_on else "none"]
    launchers, logs = [], []
    for node in range(n):
        logs.append(f"{work}/node.{node}.err")
        with open(logs[-1], "wb") as log:
            launchers.append(subprocess.Popen(
                [aml, "--nnodes", str(n), "--node-rank", str(node), "--nproc-per-node", "1",
                 "--master-addr", "127.0.0.1", "--master-port", str(port), "--rdzv-timeout", "600",
                 *flags, "--", "sh", "-c", worker], env=env, stdout=subprocess.DEVNULL,
                stderr=log))
    last_started = time.perf_counter()
    sn.wait_for_workers(work, n, launchers, logs)
    took = time.perf_counter() - last_started
    for p in launchers:
        p.send_signal(signal.SIGTERM)
    for p in launchers:
        p.wait()
    shutil.rmtree(work, ignore_errors=True)
    return took


def spare_run(aml, sick):
    """2:2 and a spare on 127.0.0.1; with `sick` the second launcher fails its check."""
    work = tempfile.mkdtemp(prefix="aml-health-spare-")
    port = sn.free_port()
    worker = 'touch "$W/up.$GROUP_RANK.$AML_HOST"; exec sleep 600'
    launchers, started = [], []
    for host in range(3):
        started.append(time.time())
        env = {"PATH": "/usr/bin:/bin", "W": work, "AML_HOST": str(host),
               "SICK": "1" if sick and host == 1 else "0"}
        launchers.append(subprocess.Popen(
            [aml, "--nnodes", "2:2", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id",
             f"spare-{port}", "--nproc-per-node", "1", "--rdzv-last-call", "0.5",
             "--health-command", 'test "$SICK" = 0', "--", "sh", "-c", worker],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if host < 2:
            time.sleep(0.1)  # in order: 0 serves the store, 1 comes before the spare
    # From the start of the launcher that fills the round: the spare where node 1 sits out.
    t0 = started[2] if sick else started[1]
    while len([f for f in os.listdir(work) if f.startswith("up.")]) < 2:
        time.sleep(0.005)
    # When each worker noted itself (its file's time), not when this loop looked.
    took = max(os.stat(f"{work}/{f}").st_mtime for f in os.listdir(work)) - t0
    ran = sorted(os.listdir(work))
    for p in launchers:
        p.send_signal(signal.SIGTERM)
    for p in launchers:
        p.wait()
    shutil.rmtree(work, ignore_errors=True)
    return took, ran


def main():
    sn.in_own_namespace(__file__)
    build = sys.argv[1]
    aml = os.path.abspath(f"{build}/launcher/aml-launch")
    nvml = os.path.abspath(f"{build}/tests/nvml-stand-in/libnvidia-ml.so.1")
    sizes = [int(a) for a in sys.argv[2:]] or [1024]
    runs = int(os.environ.get("AML_HEALTH_RUNS", "20"))
    times, whole = one_node(aml, nvml, runs)
    print(f"## One node, {runs} runs: medians (ms)")
    for check, seconds in times.items():
        print(f"| {check} | {statistics.median(seconds) * 1000:.2f} | max {max(seconds) * 1000:.2f} |")
    for label, seconds in whole.items():
        print(f"| the whole --dry-run, {label} | {statistics.median(seconds) * 1000:.1f} |")
    scale_runs = int(os.environ.get("AML_HEALTH_SCALE_RUNS", "3"))
    for n in sizes:
        on, off = [], []
        for _ in range(scale_runs):
            off.append(scale_run(aml, nvml, n, False))
            on.append(scale_run(aml, nvml, n, True))
        print(f"## Rendezvous of {n} nodes: checks off {statistics.median(off):.2f} s "
              f"({', '.join(f'{x:.2f}' for x in off)}), on {statistics.median(on):.2f} s "
              f"({', '.join(f'{x:.2f}' for x in on)}): {statistics.median(on) / statistics.median(off):.2f}x")
    sick, healthy = [], []
    for _ in range(5):
        took, ran = spare_run(aml, True)
        assert ran == ["up.0.0", "up.1.2"], ran  # node 0 and the spare, at node rank 1
        sick.append(took)
        took, ran = spare_run(aml, False)
        assert ran == ["up.0.0", "up.1.1"], ran
        healthy.append(took)
    print(f"## 2:2 and a spare: from the start of the launcher that fills the round until the round's workers ran: node 1 failing its check "
          f"{statistics.median(sick):.3f} s ({', '.join(f'{x:.3f}' for x in sick)}), all healthy "
          f"{statistics.median(healthy):.3f} s ({', '.join(f'{x:.3f}' for x in healthy)})")


if __name__ == "__main__":
    main()
