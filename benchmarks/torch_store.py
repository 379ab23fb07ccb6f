"""The workers' torch store at scale: N simulated ranks (benchmarks/torch_door_clients.cpp)
meet at the launcher's torch door (benchmarks/store_bench_server.cpp, torch) and, side by side in the
same run, at torch's own TCPStore server (Debian's torch 1.13). From the first connect until
every rank has been through the barrier and read rank 0's key: the shape of init_process_group
under TORCHELASTIC_USE_AGENT_STORE=True. In a network namespace of its own (its somaxconn and
port range are its own to set). Prints the median of RUNS runs each, their ratio, and the
door's peak memory.

usage: /usr/bin/python3 benchmarks/torch_store.py [BUILD_DIR] [N ...]   (as root)
"""
import os
import statistics
import subprocess
import sys
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
# 32,768 needs a descriptor limit over 32,768 in the store's process: where the hard limit is
# lower (and CAP_SYS_RESOURCE is not there to raise it), neither store can hold that many.
SIZES = [int(n) for n in sys.argv[2:]] or [1024, 8192, 16384]
RUNS = int(os.environ.get("RUNS", "3"))
CAP = 180  # seconds a run may take
SERVER = f"{BUILD}/benchmarks/store_bench_server"
CLIENTS = f"{BUILD}/benchmarks/torch_door_clients"
PORT = 65100  # above the clients' port range (1024-65000 here)

TORCH_SERVER = r'''
import datetime, resource, sys
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
import torch.distributed as d
s = d.TCPStore("127.0.0.1", int(sys.argv[1]), None, True, datetime.timedelta(seconds=600),
               wait_for_workers=False)
print("port", sys.argv[1], flush=True)
sys.stdin.read()
'''


def in_own_namespace():
    if os.environ.get("AML_BENCH_NETNS") == "1":
        return
    os.environ["AML_BENCH_NETNS"] = "1"
    os.execvp("unshare", ["unshare", "-n", sys.executable] + sys.argv)


def setup_network():
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for key, value in [("net.core.somaxconn", "65535"),
                       ("net.ipv4.tcp_max_syn_backlog", "65535"),
                       ("net.ipv4.ip_local_port_range", "1024 65000"),
                       ("net.ipv4.tcp_tw_reuse", "1")]:
        subprocess.run(["sysctl", "-qw", f"{key}={value}"], check=True)


def run_once(kind, n, port):
    if kind == "aml":
        server = subprocess.Popen([SERVER, str(port), "-", "torch"], stdout=subprocess.PIPE,
                                  text=True)
    else:
        server = subprocess.Popen(["/usr/bin/python3", "-c", TORCH_SERVER, str(port)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    first = server.stdout.readline()
    if not first.startswith("port"):
        raise SystemExit(f"{kind} server did not start: {first!r}")
    peak = None
    try:
        out = subprocess.run([CLIENTS, str(port), str(n)], capture_output=True, text=True,
                             timeout=CAP)
        seconds = float(out.stdout) if out.returncode == 0 else None
        if seconds is None:
            print(f"  {kind} n={n}: {out.stderr.strip()}", flush=True)
    except subprocess.TimeoutExpired:
        seconds = None
        print(f"  {kind} n={n}: over {CAP} s", flush=True)
    finally:
        if kind == "aml":
            server.terminate()
            rest = server.communicate(timeout=30)[0]
            words = rest.split()
            if "peak_rss_kib" in words:
                peak = int(words[words.index("peak_rss_kib") + 1])
        else:
            server.kill()
            server.wait()
    return seconds, peak


def main():
    in_own_namespace()
    setup_network()
    port = PORT
    print(f"# {RUNS} runs each, alternating; seconds from the first connect until every rank "
          f"read rank 0's key", flush=True)
    for n in SIZES:
        times = {"aml": [], "torch": []}
        peaks = []
        for _ in range(RUNS):
            for kind in ("aml", "torch"):
                port += 1
                seconds, peak = run_once(kind, n, port)
                times[kind].append(seconds if seconds is not None else float("inf"))
                if peak is not None:
                    peaks.append(peak)
                time.sleep(0.5)
        med = {k: statistics.median(v) for k, v in times.items()}
        ratio = med["torch"] / med["aml"] if med["aml"] > 0 else float("nan")
        print(f"n={n:6d}  aml-launch {med['aml']:8.3f} s  torch 1.13 {med['torch']:8.3f} s  "
              f"torch/aml {ratio:6.1f}x  door peak RSS {max(peaks) / 1024 if peaks else 0:.1f} MiB"
              f"  (all: aml {['%.3f' % t for t in times['aml']]}, "
              f"torch {['%.3f' % t for t in times['torch']]})", flush=True)


if __name__ == "__main__":
    main()
