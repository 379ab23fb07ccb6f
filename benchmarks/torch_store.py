"""The workers' torch store at scale: N simulated ranks (benchmarks/torch_door_clients.cpp)
meet at the store, side by side in the same run:
  aml        node 0's store as the launcher serves it: the launchers' socket, each connection's
             first bytes handing it to torch's door behind (the default: every rank of every
             node connected to node 0 directly), clients in torch >= 2.2's validated protocol;
  relayed    the same, each simulated node's 8 ranks through their node's relay
             (benchmarks/relay_bench_nodes.cpp), node 0 holding one connection a node
             (--worker-store relay, or a node 0 whose descriptors cannot hold every rank);
  torch      torch's own TCPStore server, Debian's torch 1.13 (legacy clients);
  torch-new  torch's own TCPStore server of the newest torch (libuv, the default since 2.4;
             validated clients), where TORCH_NEW names a Python with it (a venv of PyPI's
             torch); left out where it is not given;
  aml-before the aml server of an earlier build (AML_BASELINE: its build directory), where given.
KINDS=aml,aml-before (say) runs those alone.
From the first connect until every rank has been through the barrier and read rank 0's key: the
shape of init_process_group under TORCHELASTIC_USE_AGENT_STORE=True. In a network namespace of
its own (its somaxconn and port range are its own to set). Prints the median of RUNS runs each,
the ratios, and the peak memory of the door's process (and of the relays, per node).

A store that holds one connection a rank needs a descriptor limit over N in its process: where
the hard limit is lower (and CAP_SYS_RESOURCE is not there to raise it) that store cannot be
run at N here, and the line says so.

usage: /usr/bin/python3 benchmarks/torch_store.py [BUILD_DIR] [N ...]   (as root)
"""
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SIZES = [int(n) for n in sys.argv[2:]] or [1024, 8192, 16384, 32768]
RUNS = int(os.environ.get("RUNS", "3"))
CAP = 180  # seconds a run may take
PER_NODE = 8
RANKS_PER_CLIENT = 8192  # ranks one client process runs (a descriptor each)
NODES_PER_RELAY_HOST = 1024  # simulated nodes one relay process hosts (12 descriptors each)
SERVER = f"{BUILD}/benchmarks/store_bench_server"
CLIENTS = f"{BUILD}/benchmarks/torch_door_clients"
RELAYS = f"{BUILD}/benchmarks/relay_bench_nodes"
PORT = 65100  # above the clients' port range (1024-65000 here)
TORCH_NEW = os.environ.get("TORCH_NEW", "")
# An earlier build's directory: its store (aml-before) runs beside this one's.
BASELINE = os.path.abspath(os.environ["AML_BASELINE"]) if os.environ.get("AML_BASELINE") else ""
KINDS = ("aml", "relayed", "torch") + (("torch-new",) if TORCH_NEW else ()) + \
    (("aml-before",) if BASELINE else ())
if os.environ.get("KINDS"):  # a subset, e.g. KINDS=aml,aml-before
    KINDS = tuple(os.environ["KINDS"].split(","))

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


def measurable(kind, n):
    """Why `kind` cannot hold n ranks on this machine, or None."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if kind != "relayed" and hard < n + 100:
        return f"one connection a rank needs {n + 100} descriptors in the store's process; " \
               f"the hard limit here is {hard}"
    return None


def peak_of(text):
    words = text.split()
    return int(words[words.index("peak_rss_kib") + 1]) if "peak_rss_kib" in words else None


def run_clients(n, target, workdir, wire):
    """Runs the n ranks in slices; the seconds from the first connect to the last read."""
    slices = math.ceil(n / RANKS_PER_CLIENT)
    if isinstance(target, int) and slices > 1:
        door = os.path.join(workdir, "door-port")  # written once: every slice reads it
        with open(door, "w") as f:
            f.write(str(target))
    procs = []
    for s in range(slices):
        first = s * RANKS_PER_CLIENT
        count = min(RANKS_PER_CLIENT, n - first)
        if isinstance(target, int):
            if slices == 1:
                args = [str(target), str(n)]
            else:
                args = [door, str(n), str(first), str(count), str(n)]
        else:
            args = [target, str(n), str(first), str(count), str(PER_NODE)]
        procs.append(subprocess.Popen([CLIENTS] + args, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True,
                                      env={**os.environ, "TORCH_WIRE": wire}))
    starts, ends, failed = [], [], None
    deadline = time.monotonic() + CAP
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            return None, f"over {CAP} s"
        if p.returncode != 0:
            failed = failed or err.strip()
            continue
        start, end = (float(x) for x in out.split())
        starts.append(start)
        ends.append(end)
    if failed:
        return None, failed
    return max(ends) - min(starts), None


def listen_overflows():
    """The kernel's count, in this namespace, of connections a full accept queue dropped: each
    such client waits out a SYN retransmit (1 s, then 3 s, ...)."""
    lines = [line.split() for line in open("/proc/net/netstat") if line.startswith("TcpExt:")]
    fields = dict(zip(lines[0][1:], (int(v) for v in lines[1][1:])))
    return fields.get("ListenOverflows", 0)


def run_once(kind, n, port, workdir):
    """Seconds (None: failed), the door's peak RSS (KiB), the relays' peak RSS a node (KiB)."""
    if kind in ("torch", "torch-new"):
        python = "/usr/bin/python3" if kind == "torch" else TORCH_NEW
        server = subprocess.Popen([python, "-c", TORCH_SERVER, str(port)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    else:
        binary = f"{BASELINE}/benchmarks/store_bench_server" if kind == "aml-before" else SERVER
        server = subprocess.Popen([binary, str(port), "-", "shared"], stdout=subprocess.PIPE,
                                  text=True)
    first = server.stdout.readline()
    if not first.startswith("port"):
        raise SystemExit(f"{kind} server did not start: {first!r}")
    relays = []
    door_peak = relay_peak = None
    try:
        target = port
        if kind == "relayed":
            nodes = math.ceil(n / PER_NODE)
            ports = []
            for at in range(0, nodes, NODES_PER_RELAY_HOST):
                k = min(NODES_PER_RELAY_HOST, nodes - at)
                relay = subprocess.Popen([RELAYS, str(port), str(k)], stdout=subprocess.PIPE,
                                         text=True)
                relays.append((relay, k))
                line = relay.stdout.readline().split()
                if not line or line[0] != "ports":
                    raise SystemExit(f"relays did not start: {line!r}")
                ports += line[1:]
            target = os.path.join(workdir, "relay-ports")
            with open(target, "w") as f:
                f.write(" ".join(ports))
        seconds, why = run_clients(n, target, workdir, "legacy" if kind == "torch" else "validated")
        if why:
            print(f"  {kind} n={n}: {why}", flush=True)
    finally:
        for relay, k in relays:
            relay.terminate()
            peak = peak_of(relay.communicate(timeout=30)[0])
            if peak is not None:
                relay_peak = max(relay_peak or 0, peak / k)
        if kind in ("torch", "torch-new"):
            server.kill()
            server.wait()
        else:
            server.terminate()
            door_peak = peak_of(server.communicate(timeout=30)[0])
    return seconds, door_peak, relay_peak


def main():
    in_own_namespace()
    setup_network()
    port = PORT
    workdir = tempfile.mkdtemp()
    print(f"# {RUNS} runs each, alternating; seconds from the first connect until every rank "
          f"read rank 0's key; {PER_NODE} ranks a simulated node", flush=True)
    for n in SIZES:
        times = {k: [] for k in KINDS}
        door_peaks = {k: [] for k in KINDS}
        overflows = {k: 0 for k in KINDS}
        relay_peaks = []
        skipped = {k: measurable(k, n) for k in KINDS}
        for _ in range(RUNS):
            for kind in KINDS:
                if skipped[kind]:
                    continue
                port += 1
                dropped_before = listen_overflows()
                seconds, door_peak, relay_peak = run_once(kind, n, port, workdir)
                overflows[kind] += listen_overflows() - dropped_before
                times[kind].append(seconds if seconds is not None else float("inf"))
                if door_peak is not None:
                    door_peaks[kind].append(door_peak)
                if relay_peak is not None:
                    relay_peaks.append(relay_peak)
                time.sleep(0.5)
        med = {k: statistics.median(v) if v else None for k, v in times.items()}
        parts = [f"n={n:6d}"]
        for kind in KINDS:
            if med[kind] is None:
                parts.append(f"{kind}: not run ({skipped[kind]})")
                continue
            line = f"{kind} {med[kind]:.3f} s"
            if door_peaks[kind]:
                line += f" (door peak RSS {max(door_peaks[kind]) / 1024:.1f} MiB)"
            if kind == "relayed" and relay_peaks:
                line += f" (relay process peak RSS a node {max(relay_peaks):.0f} KiB)"
            parts.append(line)
        if med.get("aml-before") and med.get("aml"):
            parts.append(f"aml/aml-before {med['aml'] / med['aml-before']:.2f}x")
        if med.get("torch") and med.get("aml"):
            parts.append(f"torch/aml {med['torch'] / med['aml']:.1f}x")
        if med.get("torch-new") and med.get("aml"):
            parts.append(f"torch-new/aml {med['torch-new'] / med['aml']:.1f}x")
        if med.get("torch") and med.get("relayed"):
            parts.append(f"torch/relayed {med['torch'] / med['relayed']:.1f}x")
        if med.get("aml") and med.get("relayed"):
            parts.append(f"relayed/aml {med['relayed'] / med['aml']:.2f}x")
        parts.append("(accept queue overflows, all runs: " + ", ".join(
            f"{k} {overflows[k]}" for k in KINDS if times[k]) + ")")
        parts.append("(all: " + ", ".join(
            f"{k} {['%.3f' % t for t in times[k]]}" for k in KINDS if times[k]) + ")")
        print("  ".join(parts), flush=True)


if __name__ == "__main__":
    main()
