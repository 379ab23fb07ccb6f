#!/usr/bin/env python3
"""Is the machine as the test suite found it? (DESIGN §7: a test changes nothing outside its own
temporary folders.)

  machine_state.py sane [--root R]
      What must hold on any machine before a run: /dev/null, /dev/zero and /dev/urandom are their
      character devices (1:3, 1:5, 1:9, mode 666), /tmp is a folder of mode 1777, /etc/hosts and
      /etc/resolv.conf can be read. Each damage is named, with the command that repairs it; an
      earlier run's leftovers (its network namespaces, its processes) are named too, as warnings.
      Nothing is repaired. Exit 1 on damage.
  machine_state.py snapshot FILE [--root R]
      Records what `compare` looks at.
  machine_state.py compare FILE [--root R] [--path P]... [--settle SECONDS] [--only KIND,...]
      Names every change since the snapshot, waiting up to SECONDS (default 10) for processes
      that are still exiting. A process is the suite's own where its environment has
      AML_TEST_SUITE or AML_TEST_MARK, where it descends from such a process, or where it is
      new and its command line or folder names a P (the checkout, say). Exit 1 on a change.

--root R reads every path under R instead of / (the check's own test damages a copy, never the
machine's). The kinds: devices, etc, tmp_mode, temp_entries, netns, links, mounts, listeners,
processes.
"""
import argparse
import hashlib
import json
import os
import re
import stat
import sys
import time

DEVICES = {"/dev/null": (1, 3), "/dev/zero": (1, 5), "/dev/urandom": (1, 9)}
ETC_FILES = ("/etc/hosts", "/etc/resolv.conf")
TEMP_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
KINDS = ("devices", "etc", "tmp_mode", "temp_entries", "netns", "links", "mounts", "listeners",
         "processes")
SUITE_MARKS = (b"AML_TEST_SUITE=", b"AML_TEST_MARK=")
# The network namespaces netns_cluster.sh makes: NET-I and NET-br, NET two letters and a pid.
SUITE_NETNS = re.compile(r"^[a-z]{2}[0-9]+-(br|[0-9]+)$")
EXPLAIN = {
    "devices": "/dev/null, /dev/zero, /dev/urandom: character devices 1:3, 1:5, 1:9, mode 666",
    "etc": "/etc/hosts and /etc/resolv.conf (content, mode, link) and /etc's own entries",
    "tmp_mode": "/tmp: a folder of mode 1777",
    "temp_entries": "no new entry in /tmp, /var/tmp or /dev/shm",
    "netns": "no new network namespace (ip netns)",
    "links": "no new network interface in this namespace",
    "mounts": "the same mounts",
    "listeners": "no new listening TCP socket",
    "processes": "no process of the suite's own left running",
}


class Machine:
    """The machine's state read under ROOT ("" is the machine itself)."""

    def __init__(self, root=""):
        self.root = root.rstrip("/")

    def path(self, p):
        return self.root + p

    def listdir(self, p):
        try:
            return sorted(os.listdir(self.path(p)))
        except OSError:
            return []

    def read(self, p, mode="r"):
        try:
            with open(self.path(p), mode) as f:
                return f.read()
        except OSError:
            return None

    def node(self, p):
        """A file's kind as a word, with what identifies it (a device's numbers, a link's target)."""
        try:
            st = os.lstat(self.path(p))
        except OSError:
            return {"kind": "missing"}
        mode = oct(stat.S_IMODE(st.st_mode))[2:]
        if stat.S_ISCHR(st.st_mode):
            return {"kind": "character device",
                    "rdev": f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}", "mode": mode}
        if stat.S_ISLNK(st.st_mode):
            return {"kind": "link", "target": os.readlink(self.path(p))}
        if stat.S_ISDIR(st.st_mode):
            return {"kind": "folder", "mode": mode}
        if stat.S_ISREG(st.st_mode):
            data = self.read(p, "rb")
            digest = hashlib.sha256(data).hexdigest()[:16] if data is not None else "unreadable"
            return {"kind": "regular file", "mode": mode, "size": st.st_size, "sha256": digest}
        return {"kind": "other", "mode": mode}

    def devices(self):
        return {p: self.node(p) for p in DEVICES}

    def etc(self):
        files = {p: self.node(p) for p in ETC_FILES}
        return {"files": files, "entries": self.listdir("/etc")}

    def tmp_mode(self):
        return self.node("/tmp")

    def temp_entries(self):
        return sorted(f"{d}/{e}" for d in TEMP_FOLDERS for e in self.listdir(d))

    def netns(self):
        return self.listdir("/run/netns")

    def links(self):
        return self.listdir("/sys/class/net")

    def mounts(self):
        found = set()
        for line in (self.read("/proc/self/mountinfo") or "").splitlines():
            fields = line.split()
            if " - " not in line or len(fields) < 5:
                continue
            after = line.split(" - ", 1)[1].split()
            # The mount point, its file system and source (ids change with every mount).
            found.add(" ".join([fields[4]] + after[:2]))
        return sorted(found)

    def listeners(self):
        found = {}
        for table, family in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 6)):
            for line in (self.read(table) or "").splitlines()[1:]:
                fields = line.split()
                if len(fields) > 9 and fields[3] == "0A":  # TCP_LISTEN
                    found[fields[9]] = address_of(fields[1], family)
        return found  # socket inode -> address

    def processes(self):
        """pid -> its start time, parent, command line, folder and whether it carries a mark."""
        table = {}
        for name in self.listdir("/proc"):
            if not name.isdigit():
                continue
            stat_line = self.read(f"/proc/{name}/stat")
            if not stat_line or ")" not in stat_line:
                continue
            after = stat_line.rsplit(")", 1)[1].split()
            ppid, start = int(after[1]), after[19]
            if ppid == 2 or name == "2":  # kernel threads
                continue
            cmdline = (self.read(f"/proc/{name}/cmdline", "rb") or b"").replace(b"\0", b" ")
            environ = self.read(f"/proc/{name}/environ", "rb") or b""
            try:
                cwd = os.readlink(self.path(f"/proc/{name}/cwd"))
            except OSError:
                cwd = ""
            table[int(name)] = {"start": start, "ppid": ppid,
                                "cmd": cmdline.decode(errors="replace").strip()[:300], "cwd": cwd,
                                "marked": any(m in environ for m in SUITE_MARKS)}
        return table

    def socket_owners(self, inodes):
        """socket inode -> 'pid (command)' of a process holding it, for the inodes asked."""
        owners = {}
        wanted = {f"socket:[{i}]": i for i in inodes}
        for name in self.listdir("/proc"):
            if not name.isdigit():
                continue
            for fd in self.listdir(f"/proc/{name}/fd"):
                try:
                    link = os.readlink(self.path(f"/proc/{name}/fd/{fd}"))
                except OSError:
                    continue
                if link in wanted:
                    cmd = (self.read(f"/proc/{name}/cmdline", "rb") or b"").replace(b"\0", b" ")
                    owners[wanted[link]] = f"pid {name} ({cmd.decode(errors='replace').strip()[:80]})"
        return owners

    def snapshot(self, kinds=KINDS):
        state = {}
        for kind in kinds:
            value = getattr(self, kind)()
            if kind == "processes":
                value = {str(pid): {"start": p["start"]} for pid, p in value.items()}
            state[kind] = value
        return state


def address_of(hex_address, family):
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if family == 4:
        ip = ".".join(str(b) for b in raw[::-1])
    else:  # four 32-bit words, each in the kernel's (little-endian) order
        words = [raw[i:i + 4][::-1] for i in range(0, 16, 4)]
        ip = "[" + ":".join(b"".join(words)[i:i + 2].hex() for i in range(0, 16, 2)) + "]"
    return f"{ip}:{int(port, 16)}"


def describe(node):
    return ", ".join(f"{k} {v}" for k, v in node.items() if k != "sha256") + (
        f", sha256 {node['sha256']}" if "sha256" in node else "")


def sanity(machine):
    """Damage that no run may start on, and an earlier run's leftovers (warnings)."""
    damage, leftovers = [], []
    for path, (major, minor) in DEVICES.items():
        node = machine.node(path)
        want = {"kind": "character device", "rdev": f"{major}:{minor}", "mode": "666"}
        if node != want:
            damage.append(f"{path} is not the character device {major}:{minor} of mode 666 "
                          f"({describe(node)}); repair: rm -f {path} && mknod -m 666 {path} c "
                          f"{major} {minor} (scripts/setup.sh and .ci/run do it for /dev/null)")
    tmp = machine.node("/tmp")
    if tmp.get("kind") != "folder" or tmp.get("mode") != "1777":
        damage.append(f"/tmp is not a folder of mode 1777 ({describe(tmp)}); repair: chmod 1777 /tmp")
    for path in ETC_FILES:
        if machine.read(path) is None:
            damage.append(f"{path} cannot be read ({describe(machine.node(path))})")
    for name in machine.netns():
        if SUITE_NETNS.match(name):
            leftovers.append(f"network namespace {name} (a test host's name); remove: ip netns del {name}")
    table = machine.processes()
    lineage = own_lineage(machine, table)
    for pid, p in sorted(table.items()):
        if p["marked"] and pid not in lineage:
            leftovers.append(f"pid {pid} carries a test's mark ({p['cmd'][:100]}); stop: kill {pid}")
    return damage, leftovers


def own_lineage(machine, table=None):
    """This process and its ancestors (the suite's shell that asks is not a leftover)."""
    table = table if table is not None else machine.processes()
    lineage, pid = set(), os.getpid()
    while pid > 1:
        lineage.add(pid)
        if pid not in table:
            break
        pid = table[pid]["ppid"]
    return lineage


def suite_processes(machine, before, paths):
    """The suite's processes alive now that were not there at the snapshot."""
    table = machine.processes()
    old = before.get("processes", {})
    new = {pid: p for pid, p in table.items()
           if old.get(str(pid), {}).get("start") != p["start"]}
    lineage = own_lineage(machine, table)
    owned = {pid for pid, p in new.items()
             if p["marked"] or any(path and (path in p["cmd"] or p["cwd"].startswith(path))
                                   for path in paths)}
    grew = True
    while grew:  # and whatever these started
        more = {pid for pid, p in new.items() if p["ppid"] in owned} - owned
        grew = bool(more)
        owned |= more
    return [f"pid {pid} ({new[pid]['cmd'][:120]}) in {new[pid]['cwd'] or '?'}"
            for pid in sorted(owned - lineage)]


def changes(machine, before, kinds, paths):
    found = []
    now = machine.snapshot([k for k in kinds if k != "processes"])
    if "devices" in kinds:
        for path in DEVICES:
            if now["devices"][path] != before["devices"][path]:
                found.append(f"{path}: was {describe(before['devices'][path])}, "
                             f"is {describe(now['devices'][path])}")
    if "etc" in kinds:
        for path in ETC_FILES:
            was, now_is = before["etc"]["files"][path], now["etc"]["files"][path]
            if was != now_is:
                found.append(f"{path}: was {describe(was)}, is {describe(now_is)}")
        found += diff_lists("/etc's entries", before["etc"]["entries"], now["etc"]["entries"])
    if "tmp_mode" in kinds and now["tmp_mode"] != before["tmp_mode"]:
        found.append(f"/tmp: was {describe(before['tmp_mode'])}, is {describe(now['tmp_mode'])}")
    if "temp_entries" in kinds:
        found += diff_lists("temporary entries", before["temp_entries"], now["temp_entries"],
                            report_gone=False)
    for kind, label in (("netns", "network namespaces"), ("links", "network interfaces"),
                        ("mounts", "mounts")):
        if kind in kinds:
            found += diff_lists(label, before[kind], now[kind])
    if "listeners" in kinds:
        was = set(before["listeners"].values())
        fresh = {i: a for i, a in now["listeners"].items() if a not in was}
        owners = machine.socket_owners(fresh) if fresh else {}
        for inode, address in sorted(fresh.items(), key=lambda kv: kv[1]):
            found.append(f"listening socket {address} is new, held by "
                         f"{owners.get(inode, 'no process found')}")
    if "processes" in kinds:
        found += [f"process left running: {p}" for p in suite_processes(machine, before, paths)]
    return found


def diff_lists(label, was, now, report_gone=True):
    out = [f"{label}: new {x}" for x in sorted(set(now) - set(was))]
    if report_gone:
        out += [f"{label}: gone {x}" for x in sorted(set(was) - set(now))]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["sane", "snapshot", "compare"])
    parser.add_argument("file", nargs="?")
    parser.add_argument("--root", default="")
    parser.add_argument("--path", action="append", default=[])
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--only", default=",".join(KINDS))
    args = parser.parse_args()
    machine = Machine(args.root)
    kinds = [k for k in args.only.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"--only: unknown kind(s) {', '.join(unknown)}; the kinds: {', '.join(KINDS)}")

    if args.action == "sane":
        damage, leftovers = sanity(machine)
        for line in leftovers:
            print(f"machine check: left by an earlier run? {line}")
        for line in damage:
            print(f"machine check: DAMAGED before this run: {line}")
        print("machine check: " + ("the machine was already damaged: nothing was repaired; "
                                   "repair it and run again" if damage else
                                   "devices, /tmp and /etc's files are sound"))
        return 1 if damage else 0
    if not args.file:
        parser.error(f"{args.action} needs FILE")
    if args.action == "snapshot":
        with open(args.file, "w") as f:
            json.dump(machine.snapshot(kinds), f)
        return 0

    with open(args.file) as f:
        before = json.load(f)
    deadline = time.monotonic() + args.settle
    while True:
        found = changes(machine, before, kinds, args.path)
        if not found or time.monotonic() >= deadline:
            break
        time.sleep(0.5)  # a process still exiting, its socket and namespace with it
    print("machine check: checked that the run left " + "; ".join(EXPLAIN[k] for k in kinds))
    for line in found:
        print(f"machine check: CHANGED {line}")
    print("machine check: " + (f"{len(found)} change(s) since the run began" if found else
                               "the machine is as the run found it"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
