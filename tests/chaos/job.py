"""The elastic job under test: one aml-launch per host (--nnodes 3:4 on five hosts: one spare), each
with a metadata stand-in of its own on its loopback (Azure's Scheduled Events, fake_metadata.py)
and a --health-command that fails while the campaign's "sick" file for the host exists.

A job that ends (a notice ends it as preempted, exit 200) is queued again, as a scheduler's retry
would: every host's launcher starts again under a new --rdzv-id (an "incarnation"), and the
workers resume from the newest checkpoint.
"""
import os
import subprocess
import time

from history import event_time, read_jsonl
from hosts import addr

HERE = os.path.dirname(os.path.abspath(__file__))
BLACKBOX = os.path.join(HERE, "..", "blackbox")
PY = "/usr/bin/python3"
STORE_PORT = 29400


class Launch:
    """One launcher started on one host: its process and its files."""

    def __init__(self, host, number, incarnation, proc, files):
        self.host, self.number, self.incarnation = host, number, incarnation
        self.proc, self.files = proc, files
        self.started = time.time()
        self.ended = None
        # Started after its job's end (Job.ended): the campaign stopped it.
        self.stopped_by_harness = False

    def alive(self):
        if self.ended is None and self.proc.poll() is not None:
            self.ended = time.time()
        return self.ended is None

    def began(self):
        """When it first looked for a round (its rendezvous_begun), or None: a launcher slow to
        start (its checks, a pause) comes to the run later than its process started."""
        for row in read_jsonl(self.files["events"]):
            if row.get("kind") == "rendezvous_begun":
                return event_time(row)
        return None


class Job:
    def __init__(self, hosts, work, bin_path, engine, nnodes="3:4", workers=1, node_timeout=10,
                 ckpt_every=10, step_s=0.2, program=None, env=None):
        self.hosts, self.work, self.bin, self.engine = hosts, work, bin_path, engine
        # What each worker runs: the torch loop, or a lighter one where a test needs no torch.
        self.program = program or [PY, os.path.join(HERE, "train_job.py")]
        self.nnodes, self.workers, self.node_timeout = nnodes, workers, node_timeout
        self.ckpt_every, self.step_s = ckpt_every, step_s
        self.env = env or {}  # more for every launcher (a test's failpoint)
        self.incarnation = 0
        self.launches = []  # every Launch, in order
        self.incarnation_starts = []  # when each incarnation's launchers were started
        self.stand_ins = {}  # host: Popen of its metadata stand-in (this incarnation)
        for sub in ("workers", "ckpt", "events", "summary", "out", "meta", "tmp", "flags"):
            os.makedirs(f"{work}/{sub}", exist_ok=True)
        with open(os.open(f"{work}/secret", os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
            f.write(os.urandom(32))

    def rdzv_id(self):
        return f"chaos-{self.incarnation}"

    def endpoint(self):
        if self.engine == "etcd":
            return self.hosts.etcd_endpoints()
        return f"{addr(0)}:{STORE_PORT}"

    def notice_flag(self, host):
        return f"{self.work}/flags/notice.{self.incarnation}.{host}"

    def sick_flag(self, host):
        return f"{self.work}/flags/sick.{host}"

    def start_stand_in(self, host):
        port_file = f"{self.work}/meta/{self.incarnation}.{host}.port"
        env = {"PATH": "/usr/bin:/bin", "EVENT_AFTER_FILES": self.notice_flag(host)}
        self.stand_ins[host] = subprocess.Popen(
            self.hosts.exec_argv(host, [PY, f"{BLACKBOX}/fake_metadata.py", port_file, "preempt",
                                        f"vm-{host}", "0", "30"], env),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
                with open(port_file) as f:
                    return int(f.read())
            time.sleep(0.05)
        raise RuntimeError(f"host {host}'s metadata stand-in did not start")

    def start_incarnation(self):
        """Every host's launcher, under a new run id."""
        self.incarnation += 1
        self.incarnation_starts.append(time.time())
        for proc in self.stand_ins.values():
            proc.kill()
            proc.wait()
        self.ports = {h: self.start_stand_in(h) for h in range(self.hosts.count)}
        for host in range(self.hosts.count):
            self.start(host)
            time.sleep(0.1)

    def start(self, host):
        number = len(self.launches)
        name = f"{host}.{number}"
        files = {k: f"{self.work}/{k}/{name}.{ext}" for k, ext in
                 (("events", "jsonl"), ("summary", "json"), ("out", "txt"))}
        files["job_events"] = f"{self.work}/events/job.{name}.jsonl"
        os.makedirs(f"{self.work}/tmp/{host}", exist_ok=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": self.work, "TMPDIR": f"{self.work}/tmp/{host}",
               "CHAOS_DIR": self.work, "CHAOS_CKPT_EVERY": str(self.ckpt_every),
               "CHAOS_STEP_S": str(self.step_s), "AML_LAUNCH_NODE_NAME": f"chaos{host}",
               "AML_LAUNCH_METADATA_URL": f"http://127.0.0.1:{self.ports[host]}", **self.env}
        argv = [self.bin, "--nnodes", self.nnodes, "--nproc-per-node", str(self.workers),
                "--rdzv-backend", self.engine, "--rdzv-endpoint", self.endpoint(),
                "--rdzv-id", self.rdzv_id(), "--rdzv-secret-file", f"{self.work}/secret",
                "--max-restarts", "1000", "--node-timeout", str(self.node_timeout),
                "--rdzv-timeout", "300", "--rdzv-last-call", "2", "--term-timeout", "5",
                "--notice-from", "azure", "--health-checks", "command",
                "--health-command", f"test ! -e {self.sick_flag(host)} || {{ echo sick; exit 1; }}",
                "--events-file", files["events"], "--job-events-file", files["job_events"],
                "--summary-file", files["summary"], "--"] + self.program
        # A host name of its own (a UTS namespace), as each machine of a cluster has: the events
        # and the bench name the host.
        named = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', f"chaos{host}"] + argv
        with open(files["out"], "wb") as out:
            proc = subprocess.Popen(self.hosts.exec_argv(host, named, env), stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        launch = Launch(host, number, self.incarnation, proc, files)
        self.launches.append(launch)
        return launch

    def live(self, host=None):
        return [l for l in self.launches if l.alive() and (host is None or l.host == host)]

    def ended(self):
        """Every launcher of this incarnation has exited (the job ended). A launcher started again
        on a host after the job's end (a comeback: the nemesis brings a killed one back) is not
        one of the job's: under node 0's store it waits --rdzv-timeout for a store that is gone;
        under etcd it begins the id's next generation (as a job's pods started again under its
        name do) and waits for a round there, as documented. The job's end: host 0's launcher
        exiting on its own under node 0's store (the nemesis's kills are -9), any launcher's under
        etcd. A grace after it, the launchers still there are stopped and left out of the
        verdict: under etcd only those that came to the run after the first end (Launch.began),
        once the job's own have ended on their own (one that never does is the verdict's to
        judge, at the final SIGTERM)."""
        mine = [l for l in self.launches if l.incarnation == self.incarnation]
        live = [l for l in mine if l.alive()]
        if not live:
            return bool(mine)
        ends = [l.ended for l in mine if not l.alive() and l.proc.returncode != -9 and
                (self.engine == "etcd" or l.host == 0)]
        if not ends:
            return False
        since = min(ends)
        if self.engine == "etcd":
            # One of the job's: it came to the run before its end (one that came after began
            # the next generation, however early its process started).
            if any((began := l.began()) is not None and began <= min(ends) for l in live):
                return False
            since = max(ends)  # a comeback of the job's, seated before its end, ends on its own
        if time.time() - since < self.node_timeout + 10:
            return False
        for launch in live:
            launch.stopped_by_harness = True
            launch.proc.terminate()
        deadline = time.time() + 15
        while any(l.alive() for l in live) and time.time() < deadline:
            time.sleep(0.1)
        for launch in live:
            if launch.alive():
                launch.proc.kill()
                launch.proc.wait()
        return True

    def stop(self, timeout=60):
        """The campaign's final SIGTERM to every launcher at once, as a scheduler ends a job."""
        if getattr(self, "stopped_at", None) is None:
            self.stopped_at = time.time()
        for launch in self.live():
            launch.proc.terminate()
        deadline = time.time() + timeout
        while self.live() and time.time() < deadline:
            time.sleep(0.1)
        for proc in self.stand_ins.values():
            proc.kill()
            proc.wait()
