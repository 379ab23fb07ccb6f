"""The campaign's test hosts: network namespaces joined by a bridge (tests/cluster/netns_cluster.sh),
a real etcd on three of them (tests/cluster/etcd_cluster.sh), and what the nemesis does to a host:
find its processes, stop and continue them, cut it off with nft rules in its own namespace.

Every process the campaign starts carries CHAOS_MARK=<campaign> and CHAOS_HOST=<host> in its
environment (a launcher passes both on to its workers), so a host's processes are found in /proc
without trusting any pid file, and the campaign's end can prove that none is left.
"""
import os
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "..", "cluster", "netns_cluster.sh")
ETCD = os.path.join(HERE, "..", "cluster", "etcd_cluster.sh")


def run(*argv, check=True):
    return subprocess.run(list(argv), check=check, capture_output=True, text=True)


def addr(host):
    return f"10.77.0.{host + 1}"


def environ_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
    except OSError:
        return None


class Hosts:
    """N namespace hosts named NET-0 .. NET-(N-1); host I is at 10.77.0.(I+1)."""

    def __init__(self, net, count, work):
        self.net, self.count, self.work = net, count, work
        self.mark = net
        self.etcd_members = []
        self.etcd_data = set()  # the names of the members' data folders
        self.cut = set()  # hosts whose nft rules are in place
        self.restarting = []  # etcd members being started again

    def up(self):
        run("bash", CLUSTER, "up", self.net, str(self.count))

    def exec_argv(self, host, argv, env):
        """The command line that runs argv on host, with env alone as its environment (and the
        campaign's marks)."""
        marks = [f"CHAOS_MARK={self.mark}", f"CHAOS_HOST={host}", f"AML_TEST_MARK={self.mark}"]
        pairs = [f"{k}={v}" for k, v in sorted(env.items())]
        return ["bash", CLUSTER, "exec", self.net, str(host), "env", "-i"] + marks + pairs + argv

    def pids(self, host=None):
        """The campaign's live processes (of one host, or all): {pid: environ}."""
        found = {}
        mark = self.mark.encode()
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            env = environ_of(name)
            if not env or env.get(b"CHAOS_MARK") != mark:
                continue
            if host is not None and env.get(b"CHAOS_HOST") != str(host).encode():
                continue
            found[int(name)] = env
        return found

    def signal_host(self, host, sig):
        """sig to every process of host (its launcher, workers, etcd member, metadata stand-in)."""
        pids = set()
        # Twice: a process that started (forked) while the first pass ran is caught by the second.
        for _ in range(2):
            for pid in self.pids(host):
                try:
                    os.kill(pid, sig)
                    pids.add(pid)
                except ProcessLookupError:
                    pass
        for member in self.etcd_members:
            if member == host:
                self.etcd_signal(member, sig)
        return pids

    # A host cut off, both ways: every packet in or out of eth0 dropped in the host's own
    # namespace (loopback stays, as on a machine whose NIC is gone). What this tests: a silent
    # host, as a switch's failure or a cable pulled makes one; the other side sees nothing at all
    # (no RST, no ICMP). What it does not: delay, loss of some packets, reordering (tc netem is
    # missing from this kernel), or one-way cuts.
    def cut_off(self, host):
        rules = ("add table inet chaos\n"
                 "add chain inet chaos in { type filter hook input priority -100; policy drop; }\n"
                 "add chain inet chaos out { type filter hook output priority -100; policy drop; }\n"
                 "add rule inet chaos in iif lo accept\n"
                 "add rule inet chaos out oif lo accept\n")
        subprocess.run(["ip", "netns", "exec", f"{self.net}-{host}", "nft", "-f", "-"],
                       input=rules, text=True, check=True, capture_output=True)
        self.cut.add(host)

    def heal(self, host):
        run("ip", "netns", "exec", f"{self.net}-{host}", "nft", "delete", "table", "inet", "chaos",
            check=False)
        self.cut.discard(host)

    # etcd: one member per host given, its data on tmpfs.
    def etcd_up(self, members):
        self.etcd_members = list(members)
        run("bash", ETCD, "up", self.net, f"{self.work}/etcd", *map(str, members))
        # Their data (in /dev/shm): the leak check tells them from another cluster's.
        for m in members:
            with open(f"{self.work}/etcd/etcd.{m}/data-dir") as f:
                self.etcd_data.add(os.path.basename(f.read().strip()))

    def etcd_endpoints(self):
        return ",".join(f"{addr(m)}:2379" for m in self.etcd_members)

    def etcd_pid(self, member):
        try:
            with open(f"{self.work}/etcd/etcd.{member}/pid") as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def etcd_signal(self, member, sig):
        pid = self.etcd_pid(member)
        if pid:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def etcd_alive(self, member):
        pid = self.etcd_pid(member)
        return bool(pid) and os.path.exists(f"/proc/{pid}") and _not_zombie(pid)

    def etcd_restart(self, member):
        """The member started again on its own data (it rejoins the cluster it was in)."""
        self.restarting.append(subprocess.Popen(
            ["bash", ETCD, "up", self.net, f"{self.work}/etcd", str(member)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def down(self):
        for host in list(self.cut):
            self.heal(host)
        for proc in self.restarting:
            proc.wait()
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.etcd_members:
            run("bash", ETCD, "cont", f"{self.work}/etcd", check=False)
            run("bash", ETCD, "down", f"{self.work}/etcd", check=False)
        deadline = time.time() + 10
        while self.pids() and time.time() < deadline:
            time.sleep(0.05)
        run("bash", CLUSTER, "down", self.net, str(self.count), check=False)


def _not_zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
