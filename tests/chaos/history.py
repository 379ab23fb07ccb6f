"""The campaign's recorded history, and what the nemesis asks of it while the campaign runs.

Three records, each written as it happens:
- every launcher's events file (--events-file: rounds, seats, workers, losses, benches, the end);
- every worker's own log (train_job.py: its rank and world, each step's allreduce, checkpoints);
- the process table, sampled every half second (samples.jsonl): each of the campaign's processes,
  its role, state, descriptors and resident memory.
"""
import glob
import json
import os
import threading
import time


def read_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except ValueError:
                        rows.append({"unreadable": line})
    except OSError:
        pass
    return rows


def event_time(row):
    """An events line's time (UTC ISO 8601 with milliseconds) as seconds since the epoch."""
    import datetime
    text = row["time"].rstrip("Z")
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc).timestamp()


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def proc_status(pid):
    """(state letter, resident KiB, descriptors, CPU ticks) of a process, or None once gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        state, ticks = fields[0], int(fields[11]) + int(fields[12])
        rss = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return state, rss, fds, ticks
    except (OSError, IndexError, ValueError):
        return None


def descriptor_kinds(pid):
    """{kind: count} of a process's descriptors (socket, pipe, eventfd, a file...): what grew,
    when a launcher's descriptors grow."""
    kinds = {}
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return kinds
    for name in names:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        kind = target.split(":", 1)[0] if ":" in target and not target.startswith("/") else "file"
        if kind == "anon_inode":
            kind = target.split(":", 1)[1].strip("[]")
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


class History:
    def __init__(self, hosts, work, bin_path):
        self.hosts, self.work, self.bin = hosts, work, os.path.realpath(bin_path)
        self.samples = open(os.path.join(work, "samples.jsonl"), "a")
        self.stop_sampling = threading.Event()
        self.sampler = threading.Thread(target=self.sample_loop, daemon=True)
        self.busy = []  # (time, busy ticks, all ticks) of the machine's CPUs
        self.ticks = {}  # pid: its CPU ticks when last seen

    # --- the process table ----------------------------------------------------------------
    def role(self, pid):
        argv = cmdline(pid)
        if not argv:
            return None
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == self.bin:
                return "launcher"
        except OSError:
            return None
        if any(a.endswith(b"train_job.py") for a in argv):
            return "worker"
        return "other"

    def is_worker(self, pid):
        return self.role(pid) == "worker"

    def rank_of(self, pid):
        env = self.hosts.pids().get(pid) or {}
        rank = env.get(b"RANK")
        return int(rank) if rank is not None else None

    def sample(self):
        rows = []
        for pid, env in self.hosts.pids().items():
            role = self.role(pid)
            status = proc_status(pid)
            if role is None or status is None:
                continue
            rank = env.get(b"RANK")
            rows.append([pid, int(env[b"CHAOS_HOST"]), role, status[0], status[1], status[2],
                         int(rank) if rank is not None else None, status[3],
                         descriptor_kinds(pid) if role == "launcher" else None])
            self.ticks[pid] = status[3]
        self.samples.write(json.dumps({"t": round(time.time(), 3), "p": rows}) + "\n")
        self.busy.append((time.time(),) + cpu_ticks())

    def sample_loop(self):
        while not self.stop_sampling.wait(0.5):
            self.sample()

    def start(self):
        self.busy.append((time.time(),) + cpu_ticks())
        self.sampler.start()

    def stop(self):
        self.stop_sampling.set()
        self.sampler.join()
        self.samples.close()

    def own_cpu_share(self):
        """The campaign's own processes' CPU time (as last sampled), of the machine's CPUs' time
        over the campaign."""
        if len(self.busy) < 2:
            return None
        return sum(self.ticks.values()) / max(1, self.busy[-1][2] - self.busy[0][2])

    def cpu_busy_share(self):
        if len(self.busy) < 2:
            return None
        (_, b0, a0), (_, b1, a1) = self.busy[0], self.busy[-1]
        return (b1 - b0) / max(1, a1 - a0)

    # --- the files ------------------------------------------------------------------------
    def worker_logs(self):
        """{(host, pid): [rows]} of every worker that wrote a log."""
        logs = {}
        for path in glob.glob(os.path.join(self.work, "workers", "*.jsonl")):
            host, pid = os.path.basename(path).split(".")[:2]
            logs[(int(host), int(pid))] = read_jsonl(path)
        return logs

    def events(self):
        """{launch number: (host, [rows])} of every launcher's events file."""
        found = {}
        for path in glob.glob(os.path.join(self.work, "events", "[0-9]*.jsonl")):
            host, number = os.path.basename(path).split(".")[:2]
            found[int(number)] = (int(host), read_jsonl(path))
        return found

    def current_node0(self):
        """The host whose launcher holds node rank 0 in the newest round formed, or None."""
        newest = None
        for host, rows in self.events().values():
            for row in rows:
                if row.get("kind") == "rendezvous_formed" and row.get("node_rank") == 0:
                    if newest is None or row["time"] > newest[0]:
                        newest = (row["time"], host)
        return newest[1] if newest else None

    def current_master(self):
        """(addr, port) the newest worker was given as MASTER_ADDR:MASTER_PORT, or None."""
        newest = None
        for rows in self.worker_logs().values():
            for row in rows:
                if row.get("ev") == "start" and (newest is None or row["t"] > newest["t"]):
                    newest = row
        if newest is None:
            return None
        host, port = newest["master"].rsplit(":", 1)
        return host, int(port)


def cpu_ticks():
    """(busy, all) ticks of the machine's CPUs since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)
