"""What etcd's requests cost it: a three-member etcd on loopback, its load (CPU seconds, calls),
and the cost of one request of each kind the rendezvous makes (benchmarks/etcd_rendezvous.py's
`requests` and `transport`, which run this; its `scale` uses the etcd and the load).

requests: what one request of each kind costs etcd (its three members' CPU per request, through
  the v3 JSON gateway, 30 clients at once on loopback): the unit that etcd_rendezvous.py's calls
  per launcher multiply.

transport: the same requests through the gateway and through etcd's own gRPC API (Debian's
  python3-grpcio; protobuf written by hand), side by side: what the gateway costs etcd. A
  watch is created and closed: through the gateway always on a connection of its own (an
  HTTP/1.1 stream), through gRPC on one of its own or as a stream of a shared connection.

usage: /usr/bin/python3 benchmarks/etcd_requests.py requests|transport   (as root: a network
       namespace of its own)
"""

import base64
import contextlib
import collections
import http.client
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_nodes as sn  # noqa: E402  (its namespace and free ports)


# --- a three-member etcd on loopback, and its load.

def loopback_etcd(work):
    procs, endpoints = [], []
    ports = [(sn.free_port(), sn.free_port()) for _ in range(3)]
    initial = ",".join(f"e{i}=http://127.0.0.1:{p[1]}" for i, p in enumerate(ports))
    for i, (client, peer) in enumerate(ports):
        procs.append(subprocess.Popen(
            ["etcd", "--name", f"e{i}", "--data-dir", f"{work}/etcd{i}",
             "--listen-client-urls", f"http://127.0.0.1:{client}",
             "--advertise-client-urls", f"http://127.0.0.1:{client}",
             "--listen-peer-urls", f"http://127.0.0.1:{peer}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
             "--initial-cluster", initial, "--initial-cluster-state", "new",
             "--heartbeat-interval", "100", "--election-timeout", "1000"],
            stdout=subprocess.DEVNULL, stderr=open(f"{work}/etcd{i}.log", "wb")))
        endpoints.append(f"127.0.0.1:{client}")
    for _ in range(100):
        ok = subprocess.run(["etcdctl", "--endpoints", ",".join(endpoints), "endpoint", "health"],
                            env=dict(os.environ, ETCDCTL_API="3"), capture_output=True)
        if ok.returncode == 0:
            break
        time.sleep(0.1)
    return procs, ",".join(endpoints)


@contextlib.contextmanager
def etcd_alone(script, name):
    """In a network namespace of its own (`script` re-run there with this process's arguments),
    etcd's three members on loopback: (their processes, their endpoints), gone afterwards."""
    sn.in_own_namespace(script)
    work = tempfile.mkdtemp(prefix=f"aml-etcd-{name}-",
                            dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    procs, endpoints = [], ""
    try:
        procs, endpoints = loopback_etcd(work)
        yield procs, endpoints
    finally:
        for p in procs:
            p.kill()
        shutil.rmtree(work, ignore_errors=True)


def etcd_load(members, endpoints):
    """(CPU seconds of etcd's members so far, {gRPC method: calls handled} summed over them)."""
    cpu = 0.0
    for p in members:
        fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
        cpu += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    calls = collections.Counter()
    for endpoint in endpoints.split(","):
        text = urllib.request.urlopen(f"http://{endpoint}/metrics", timeout=10).read().decode()
        for m in re.finditer(r'grpc_server_handled_total\{[^}]*grpc_method="(\w+)"[^}]*\} (\d+)',
                             text):
            calls[m.group(1)] += int(m.group(2))
    return cpu, calls



# --- requests: etcd's CPU per gateway request, by kind.
def request_body(kind, client, k):
    def b64(text):
        return base64.b64encode(text.encode()).decode()
    key = b64(f"bench/{kind}/{client}/{k}")
    if kind == "put":
        return "/v3/kv/put", {"key": key, "value": b64("x" * 40)}
    if kind == "range":
        return "/v3/kv/range", {"key": key}
    if kind == "serializable range":
        return "/v3/kv/range", {"key": key, "serializable": True}
    if kind == "txn (create if absent)":
        return "/v3/kv/txn", {
            "compare": [{"key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0"}],
            "success": [{"request_put": {"key": key, "value": b64("v")}}]}
    return "/v3/watch", {"create_request": {"key": key}}


def request_client(endpoint, kind, client, count):
    host, port = endpoint.split(":")
    unary = http.client.HTTPConnection(host, int(port), timeout=30)
    for k in range(count):
        path, body = request_body(kind, client, k)
        if path == "/v3/watch":  # a connection of its own, closed once the watch is created
            stream = http.client.HTTPConnection(host, int(port), timeout=30)
            stream.request("POST", path, json.dumps(body))
            stream.getresponse().fp.readline()
            stream.close()
        else:
            unary.request("POST", path, json.dumps(body))
            unary.getresponse().read()


def clients_at_once(client, kind, clients, each, procs, endpoints):
    """`clients` threads of `each` requests of a kind, spread over the members: etcd's CPU
    seconds for them, and the wall time."""
    members = endpoints.split(",")
    cpu_before = etcd_load(procs, endpoints)[0]
    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(members[c % len(members)], kind, c, each))
               for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return etcd_load(procs, endpoints)[0] - cpu_before, time.perf_counter() - started


def requests(script=__file__):
    """`script`: the one re-run in a namespace of its own (with this process's arguments)."""
    clients, each = 30, 100
    with etcd_alone(script, "requests") as (procs, endpoints):
        print(f"etcd's three members on loopback, {clients} clients at once, {each} requests "
              f"each, spread over the members")
        print("| request | etcd CPU per request | requests per second |")
        print("|---|---:|---:|")
        for kind in ("put", "range", "serializable range", "txn (create if absent)",
                     "watch (created, then closed)"):
            cpu, took = clients_at_once(request_client, kind, clients, each, procs, endpoints)
            print(f"| {kind} | {cpu / (clients * each) * 1000:.2f} ms | "
                  f"{clients * each / took:.0f} |", flush=True)


# --- transport: the gateway against etcd's gRPC API, per request.


def protobuf_bytes(field, data):
    """A length-delimited protobuf field."""
    out, size = bytes([field << 3 | 2]), len(data)
    while size >= 0x80:
        out += bytes([size & 0x7F | 0x80])
        size >>= 7
    return out + bytes([size]) + data


def grpc_watches(channel, endpoint, kind, client, count):
    """Watches created and closed: each on a channel of its own, or streams of one channel."""
    import grpc
    for k in range(count):
        own = grpc.insecure_channel(endpoint) if "own" in kind else channel
        watch = own.stream_stream("/etcdserverpb.Watch/Watch", request_serializer=None,
                                  response_deserializer=None)
        created = threading.Event()
        # WatchRequest.create_request (1) {key (1)}; the stream stays open until it is created.
        request = protobuf_bytes(1, protobuf_bytes(1, f"bench/{kind}/{client}/{k}".encode()))

        def requests_of(request=request, created=created):
            yield request
            created.wait()
        answers = watch(requests_of())
        next(answers)
        created.set()
        answers.cancel()
        if own is not channel:
            own.close()


def grpc_client(endpoint, kind, client, count):
    import grpc  # Debian's python3-grpcio
    channel = grpc.insecure_channel(endpoint)
    if kind.startswith("watch"):
        grpc_watches(channel, endpoint, kind, client, count)
        channel.close()
        return
    method = "/etcdserverpb.KV/Put" if kind == "put" else "/etcdserverpb.KV/Range"
    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    for k in range(count):
        key = protobuf_bytes(1, f"bench/{kind}/{client}/{k}".encode())
        if kind == "put":
            call(key + protobuf_bytes(2, b"x" * 40))
        else:  # RangeRequest: serializable is field 7
            call(key + (b"\x38\x01" if kind == "serializable range" else b""))
    channel.close()


def transport(script=__file__):
    """`script`: as requests's."""
    if importlib.util.find_spec("grpc") is None:
        raise SystemExit("transport: needs Debian's python3-grpcio (apt-get install "
                         "python3-grpcio) for etcd's gRPC API")
    clients, each, rounds = 30, 100, 3
    with etcd_alone(script, "transport") as (procs, endpoints):
        print(f"etcd's three members on loopback, {clients} clients at once, {each} requests "
              f"each; medians of {rounds} rounds, the transports alternating")
        print("| request | etcd CPU per request, gateway | gRPC | gateway over gRPC |")
        print("|---|---:|---:|---:|")
        for kind in ("put", "range", "serializable range", "watch (own connection)",
                     "watch (gRPC: a stream of a shared connection)"):
            cost = {"gateway": [], "grpc": []}
            for _ in range(rounds):
                for how, client in (("gateway", request_client), ("grpc", grpc_client)):
                    cpu, _ = clients_at_once(client, kind, clients, each, procs, endpoints)
                    cost[how].append(cpu / (clients * each) * 1000)
            gw, rpc = statistics.median(cost["gateway"]), statistics.median(cost["grpc"])
            print(f"| {kind} | {gw:.2f} ms | {rpc:.2f} ms | {gw / rpc:.2f}x |", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["requests"]:
        requests()
    elif sys.argv[1:] == ["transport"]:
        transport()
    else:
        raise SystemExit("usage: etcd_requests.py requests|transport")
