#!/usr/bin/env python3
"""The end-of-suite machine check, seen to pass and to fail: on a copy of the things it checks (a
folder laid out as / with its own /dev/null made by mknod, /etc, /tmp, /proc files and processes
of its own), damaged the ways a test could damage them, never the machine's own; and on the
machine itself for what only the machine has (a real process and a real listening socket of this
test's, named and then gone); and scripts/restore-devices.sh's repair, on a copy. Needs root (mknod). Ends with 'N passed, N failed'.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = [sys.executable, os.path.join(HERE, "machine_state.py")]
RESTORE = os.path.join(HERE, "..", "..", "scripts", "restore-devices.sh")
results = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f"\n{detail}"))


def run(*args):
    out = subprocess.run(CHECK + list(args), capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def write(root, path, text, mode=0o644):
    full = root + path
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)
    os.chmod(full, mode)


def fake_process(root, pid, ppid, cmd, environ=b"PATH=/bin", start=1000, cwd="/"):
    base = f"{root}/proc/{pid}"
    os.makedirs(f"{base}/fd", exist_ok=True)
    write(root, f"/proc/{pid}/stat",
          f"{pid} ({cmd.split()[0]}) S {ppid} {pid} {pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 {start} 0\n")
    with open(f"{base}/cmdline", "wb") as f:
        f.write(cmd.replace(" ", "\0").encode() + b"\0")
    with open(f"{base}/environ", "wb") as f:
        f.write(environ + b"\0")
    os.symlink(cwd, f"{base}/cwd")


MOUNTINFO = "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
TCP_HEAD = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"


def tcp_line(n, port, inode):
    return (f"   {n}: 0100007F:{port:04X} 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
            f"     0        0 {inode} 1 0000000000000000 100 0 0 10 0\n")


def pristine(root):
    """A machine laid out under ROOT as the suite finds a sound one."""
    for path, (major, minor) in (("/dev/null", (1, 3)), ("/dev/zero", (1, 5)),
                                 ("/dev/urandom", (1, 9))):
        os.makedirs(os.path.dirname(root + path), exist_ok=True)
        os.mknod(root + path, 0o666 | 0o020000, os.makedev(major, minor))
        os.chmod(root + path, 0o666)
    write(root, "/etc/hosts", "127.0.0.1 localhost\n")
    write(root, "/etc/resolv.conf", "nameserver 127.0.0.53\n")
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/netns", "/sys/class/net/lo"):
        os.makedirs(root + folder, exist_ok=True)
    os.chmod(root + "/tmp", 0o1777)
    write(root, "/proc/self/mountinfo", MOUNTINFO)
    write(root, "/proc/net/tcp", TCP_HEAD + tcp_line(0, 22, 111))
    write(root, "/proc/net/tcp6", TCP_HEAD)
    fake_process(root, 1, 0, "/sbin/init")
    fake_process(root, 300, 1, "/usr/sbin/sshd -D")
    os.symlink("socket:[111]", f"{root}/proc/300/fd/3")


def damage(root):
    """What tests have done or could do to a machine."""
    # zsh's compinit -d /dev/null: its dump written beside, then renamed over the device.
    write(root, "/dev/null.host.123", "")
    os.rename(root + "/dev/null.host.123", root + "/dev/null")
    write(root, "/etc/hosts", "127.0.0.1 localhost\n10.0.0.1 intruder\n")
    os.chmod(root + "/etc/resolv.conf", 0o600)
    os.makedirs(root + "/etc/netns/xy1-0")
    os.chmod(root + "/tmp", 0o755)
    os.makedirs(root + "/tmp/tmp.leftover")
    write(root, "/dev/shm/aml-leftover", "x")
    write(root, "/run/netns/xy1-0", "")
    os.makedirs(root + "/sys/class/net/xy1-v0")
    write(root, "/proc/self/mountinfo", MOUNTINFO + "90 22 0:50 / /run/netns rw - tmpfs tmpfs rw\n")
    write(root, "/proc/net/tcp", TCP_HEAD + tcp_line(0, 22, 111) + tcp_line(1, 29500, 222))
    fake_process(root, 4242, 1, "aml-launch --nproc-per-node 2 -- sleep 600",
                 environ=b"AML_TEST_MARK=xy1", start=5000)
    os.symlink("socket:[222]", f"{root}/proc/4242/fd/7")
    fake_process(root, 4243, 4242, "sleep 600", start=5001)  # its worker: no mark of its own
    fake_process(root, 4300, 1, "etcd --data-dir /work/checkout/build/etcd", start=5002)
    fake_process(root, 4400, 1, "cron -f", start=5003)  # new, but not the suite's


def test_fake_machine(top):
    root = os.path.join(top, "root")
    pristine(root)
    status, out = run("sane", "--root", root)
    check("a sound machine is called sound", status == 0 and "sound" in out, out)
    snap = os.path.join(top, "before.json")
    status, out = run("snapshot", snap, "--root", root)
    check("a snapshot is taken", status == 0 and os.path.getsize(snap) > 0, out)
    status, out = run("compare", snap, "--root", root, "--settle", "0")
    check("an untouched machine compares equal",
          status == 0 and "the machine is as the run found it" in out, out)
    check("the check says what it checked",
          all(w in out for w in ("/dev/null", "/etc/hosts", "/tmp", "network namespace", "mounts",
                                 "listening TCP socket", "process")), out)

    damage(root)
    status, out = run("compare", snap, "--root", root, "--settle", "0",
                      "--path", "/work/checkout")
    check("a damaged machine fails the check", status == 1, out)
    wanted = {
        "/dev/null turned into a regular file": "CHANGED /dev/null: was kind character device, rdev 1:3, mode 666, is kind regular file",
        "/etc/hosts' content": "CHANGED /etc/hosts: was",
        "/etc/resolv.conf's mode": "mode 600",
        "a new entry in /etc": "/etc's entries: new netns",
        "/tmp's mode": "CHANGED /tmp: was kind folder, mode 1777, is kind folder, mode 755",
        "a temporary folder left": "temporary entries: new /tmp/tmp.leftover",
        "a file left in /dev/shm": "temporary entries: new /dev/shm/aml-leftover",
        "a network namespace left": "network namespaces: new xy1-0",
        "a network interface left": "network interfaces: new xy1-v0",
        "a mount left": "mounts: new /run/netns tmpfs tmpfs",
        "a listening socket, with its owner": "listening socket 127.0.0.1:29500 is new, held by pid 4242 (aml-launch",
        "a marked process": "process left running: pid 4242 (aml-launch",
        "its unmarked child": "process left running: pid 4243 (sleep 600)",
        "a process of the checkout's": "process left running: pid 4300 (etcd",
    }
    for what, line in wanted.items():
        check(f"the check names {what}", line in out, out)
    check("a process that is not the suite's is not blamed", "pid 4400" not in out, out)
    check("a process there before is not blamed", "pid 300 " not in out, out)

    status, out = run("sane", "--root", root)
    check("the start's check says the machine was already damaged (/dev/null, /tmp), exit 1",
          status == 1 and "DAMAGED before this run: /dev/null is not the character device 1:3"
          in out and "mknod -m 666 /dev/null c 1 3" in out and "DAMAGED before this run: /tmp"
          in out, out)
    check("the start's check names an earlier run's leftovers",
          "left by an earlier run? network namespace xy1-0" in out and
          "left by an earlier run? pid 4242" in out, out)
    check("the start's check repairs nothing",
          os.path.isfile(root + "/dev/null") and (os.stat(root + "/tmp").st_mode & 0o7777) == 0o755,
          out)


def test_restore(top):
    """scripts/restore-devices.sh (setup.sh and .ci/run) on a copy whose /dev/null is a file."""
    root = os.path.join(top, "restore")
    pristine(root)
    write(root, "/dev/null.host.9", "junk written by root")
    os.rename(root + "/dev/null.host.9", root + "/dev/null")
    out = subprocess.run(["bash", RESTORE], env=dict(os.environ, AML_DEVICES_ROOT=root),
                         capture_output=True, text=True)
    said = out.stdout + out.stderr
    st = os.lstat(root + "/dev/null")
    check("a regular file where /dev/null belongs is made the device 1:3 of mode 666 again",
          out.returncode == 0 and (st.st_mode & 0o170000) == 0o020000 and
          (os.major(st.st_rdev), os.minor(st.st_rdev)) == (1, 3) and (st.st_mode & 0o777) == 0o666,
          said)
    check("the repair is said, naming the file it replaced",
          f"{root}/dev/null was a regular file of 20 bytes" in said, said)
    status, _ = run("sane", "--root", root)
    check("the repaired copy is sound", status == 0)
    out = subprocess.run(["bash", RESTORE], env=dict(os.environ, AML_DEVICES_ROOT=root),
                         capture_output=True, text=True)
    check("a sound machine: nothing done, nothing said", out.returncode == 0 and
          out.stdout + out.stderr == "", out.stdout + out.stderr)


def test_real_machine(top):
    """A process and a listening socket of this test's own on the machine: named, then gone."""
    snap = os.path.join(top, "real.json")
    status, out = run("snapshot", snap, "--only", "processes,listeners")
    check("a snapshot of the machine's processes and sockets", status == 0, out)
    mark = f"AML_TEST_SUITE=machine-state-test-{os.getpid()}"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    child = subprocess.Popen(
        [sys.executable, "-c", "import socket, sys, time\ns = socket.socket()\n"
         "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); print('up', flush=True); "
         "time.sleep(60)", str(port)],
        env=dict(os.environ, **dict([mark.split("=", 1)])), stdout=subprocess.PIPE, text=True)
    try:
        child.stdout.readline()
        status, out = run("compare", snap, "--only", "processes,listeners", "--settle", "0")
        check("a marked process of this test's, left running, is named with its pid",
              status == 1 and f"process left running: pid {child.pid} " in out, out)
        check("its listening socket is named with its address and owner",
              f"listening socket 127.0.0.1:{port} is new, held by pid {child.pid}" in out, out)
    finally:
        child.kill()
        child.wait()
    deadline = time.monotonic() + 5
    while True:
        status, out = run("compare", snap, "--only", "processes,listeners", "--settle", "0")
        gone = f"pid {child.pid} " not in out and f"127.0.0.1:{port} " not in out
        if gone or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    # Other tests run beside this one: only this test's own process and socket are asked about.
    check("once it is gone, neither is named", gone, out)


def main():
    if os.geteuid() != 0:
        check("runs as root (the copy's devices are made with mknod)", False)
    else:
        top = tempfile.mkdtemp(prefix="machine-state-test.")
        try:
            test_fake_machine(top)
            test_restore(top)
            test_real_machine(top)
        finally:
            shutil.rmtree(top)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
