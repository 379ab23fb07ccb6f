"""How fast a multi-node job stops on every node (DESIGN §5), on a cluster of network
namespaces (tests/cluster/netns_cluster.sh), 3 nodes x 2 workers, Azure ML PyTorch per-node
environment:
  1. failure: rank 5 (node 2) exits 7 while every other worker sleeps; time from its exit to
     the moment the last launcher of the job has exited (all workers are gone by then);
  2. lost launcher: node 1's launcher is SIGKILLed after the rendezvous; time until the
     launchers of nodes 0 and 2 have exited.
usage (root): /usr/bin/python3 benchmarks/multinode_teardown.py [BUILD_DIR [RUNS]]"""
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
AML = f"{BUILD}/launcher/aml-launch"
CLUSTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cluster", "netns_cluster.sh")
NAME = f"amlb{os.getpid()}"
MASTER = "10.77.0.1"


def node_env(i):
    return ["env", "-i", "PATH=/usr/bin:/bin", f"MASTER_ADDR={MASTER}", "MASTER_PORT=29611", "WORLD_SIZE=3",
            f"NODE_RANK={i}", f"RANK={i}", "LOCAL_RANK=0", "AZUREML_RUN_ID=bench"]


def start(i, work, command):
    out = open(f"{work}/out.{i}", "w")
    return subprocess.Popen([CLUSTER, "exec", NAME, str(i)] + node_env(i) + [AML, "--nproc-per-node", "2", "--"] +
                            command, stdout=out, stderr=subprocess.STDOUT)


def wait_all(procs):
    """Waits for each; gives the time each one ended."""
    ended = {}
    pending = dict(procs)
    while pending:
        for i, p in list(pending.items()):
            if p.poll() is not None:
                ended[i] = time.time()
                del pending[i]
        time.sleep(0.001)
    return ended


def failure_run(work):
    script = ('if [ "$RANK" = 5 ]; then sleep 1; python3 -c "import time; print(time.time())" > "$0/failed_at";'
              ' exit 7; fi; exec sleep 60')
    procs = {i: start(i, work, ["sh", "-c", script, work]) for i in range(3)}
    ended = wait_all(procs)
    codes = {p.returncode for p in procs.values()}
    assert codes == {7}, (codes, [open(f"{work}/out.{i}").read() for i in range(3)])
    return max(ended.values()) - float(open(f"{work}/failed_at").read())


def lost_launcher_run(work):
    procs = {i: start(i, work, ["sleep", "60"]) for i in range(3)}
    deadline = time.time() + 20
    while time.time() < deadline:
        if all("joined run round 0" in open(f"{work}/out.{i}").read() for i in range(3)):
            break
        time.sleep(0.01)
    time.sleep(0.2)
    # The launcher itself: ip netns exec replaced itself by env, and env by aml-launch.
    killed_at = time.time()
    os.kill(procs[1].pid, signal.SIGKILL)
    ended = wait_all({i: procs[i] for i in (0, 2)})
    procs[1].wait()
    assert {procs[i].returncode for i in (0, 2)} == {1}
    return max(ended.values()) - killed_at


def main():
    subprocess.run([CLUSTER, "up", NAME, "3"], check=True)
    try:
        results = {"failure": [], "lost": []}
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory() as work:
                results["failure"].append(failure_run(work))
            with tempfile.TemporaryDirectory() as work:
                results["lost"].append(lost_launcher_run(work))
    finally:
        subprocess.run([CLUSTER, "down", NAME, "3"])
    print("| event | runs | median [ms] | max [ms] | target |\n|---|---:|---:|---:|---|")
    for name, label, target in (("failure", "rank 5 on node 2 exits 7 -> every launcher exited", "< 1000 ms"),
                                ("lost", "node 1's launcher SIGKILLed -> nodes 0 and 2 exited", "< 2000 ms")):
        s = results[name]
        print(f"| {label} | {len(s)} | {statistics.median(s) * 1000:.0f} | {max(s) * 1000:.0f} | {target} |")


if __name__ == "__main__":
    main()
