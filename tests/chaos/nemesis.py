"""The nemesis: carries out the schedule's faults against the job's hosts, each at its time, and
their healing halves after their durations. Faults overlap where the schedule has them overlap.
What it did is recorded (faults.jsonl): each fault's time, its target as it found it when it
fired (which launcher, which worker, which member), and when it healed.
"""
import heapq
import json
import os
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STRANGER = os.path.join(HERE, "..", "blackbox", "store_stranger.py")


class Nemesis:
    def __init__(self, hosts, job, history, faults, start):
        self.hosts, self.job, self.history = hosts, job, history
        self.start = start
        self.queue = [(start + f["at"], f["n"], "fire", f) for f in faults]
        heapq.heapify(self.queue)
        self.record = {f["n"]: dict(f) for f in faults}
        self.until = {}  # (kind, host): when the last of the host's faults of that kind heals
        self.floods = []
        self.log = open(os.path.join(job.work, "faults.jsonl"), "a")

    def note(self, fault, **fields):
        self.record[fault["n"]].update(fields)
        self.log.write(json.dumps(dict(n=fault["n"], kind=fault["kind"], t=time.time(), **fields)) + "\n")
        self.log.flush()

    def due(self):
        return self.queue[0][0] if self.queue else None

    def step(self, now):
        """Carries out what is due by now."""
        while self.queue and self.queue[0][0] <= now:
            _, _, what, fault = heapq.heappop(self.queue)
            getattr(self, f"{what}_{fault['kind']}")(fault)

    def later(self, fault, what, seconds):
        heapq.heappush(self.queue, (time.time() + seconds, fault["n"], what, fault))

    def drain(self):
        """Every healing half still pending, at once (the campaign's end)."""
        while self.queue:
            _, _, what, fault = heapq.heappop(self.queue)
            if what != "fire":
                getattr(self, f"{what}_{fault['kind']}")(fault)
        for proc in self.floods:
            end_flood(proc)
        self.floods = []

    # --- each fault: fire_KIND, and where it heals, heal_KIND ---------------------------------
    def seated_launch(self, host):
        """This incarnation's live launcher on host, or None."""
        live = [l for l in self.job.live(host) if l.incarnation == self.job.incarnation]
        return live[-1] if live else None

    def fire_kill_launcher(self, fault, host=None):
        host = fault["host"] if host is None else host
        launch = self.seated_launch(host)
        if launch is None:
            self.note(fault, fired=time.time(), target=None, effect="no launcher on the host")
        else:
            self.note(fault, fired=time.time(), target={"host": host, "launch": launch.number,
                                                         "pid": launch.proc.pid})
            os.kill(launch.proc.pid, signal.SIGKILL)
        self.later(fault, "heal", fault["duration"])

    def heal_kill_launcher(self, fault):
        host = self.record[fault["n"]].get("target", {}) or {}
        host = host.get("host", fault["host"])
        if self.seated_launch(host) is None and not self.job.ended():
            launch = self.job.start(host)
            self.note(fault, healed=time.time(), comeback={"host": host, "launch": launch.number})
        else:
            self.note(fault, healed=time.time(), comeback=None)

    def fire_kill_node0(self, fault):
        node0 = self.history.current_node0()
        host = node0 if node0 is not None else fault["host"]
        self.fire_kill_launcher(fault, host)

    heal_kill_node0 = heal_kill_launcher

    def fire_kill_worker(self, fault):
        workers = sorted((int(env[b"CHAOS_HOST"]), pid) for pid, env in self.hosts.pids().items()
                         if env.get(b"RANK") is not None and self.history.is_worker(pid))
        if not workers:
            self.note(fault, fired=time.time(), target=None, effect="no worker running")
            return
        host, pid = workers[fault["pick"] % len(workers)]
        self.note(fault, fired=time.time(), target={"host": host, "pid": pid,
                                                     "rank": self.history.rank_of(pid)})
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    # Faults of one host that overlap (a pause during a pause, a cut during a cut) heal when the
    # last of them ends: each keeps the host's end of its kind, and the heal that comes last acts.
    def hold(self, kind, fault):
        key = (kind, fault["host"])
        first = key not in self.until
        self.until[key] = max(self.until.get(key, 0), time.time() + fault["duration"])
        self.later(fault, "heal", fault["duration"])
        return first

    def release(self, kind, fault):
        key = (kind, fault["host"])
        if key in self.until and self.until[key] <= time.time() + 0.05:
            del self.until[key]
            return True
        return False

    def fire_pause(self, fault):
        pids = self.hosts.signal_host(fault["host"], signal.SIGSTOP)
        self.hold("pause", fault)
        self.note(fault, fired=time.time(), target={"host": fault["host"], "pids": len(pids)})

    def heal_pause(self, fault):
        if self.release("pause", fault):
            self.hosts.signal_host(fault["host"], signal.SIGCONT)
        self.note(fault, healed=time.time())

    def fire_partition(self, fault):
        if self.hold("partition", fault):
            self.hosts.cut_off(fault["host"])
        self.note(fault, fired=time.time(), target={"host": fault["host"]})

    def heal_partition(self, fault):
        if self.release("partition", fault):
            self.hosts.heal(fault["host"])
        self.note(fault, healed=time.time())

    def fire_sick(self, fault):
        if self.hold("sick", fault):
            open(self.job.sick_flag(fault["host"]), "w").close()
        self.note(fault, fired=time.time(), target={"host": fault["host"]})

    def heal_sick(self, fault):
        if self.release("sick", fault):
            os.unlink(self.job.sick_flag(fault["host"]))
        self.note(fault, healed=time.time())

    def fire_notice(self, fault):
        open(self.job.notice_flag(fault["host"]), "w").close()
        self.note(fault, fired=time.time(), target={"host": fault["host"],
                                                     "incarnation": self.job.incarnation})

    def fire_flood(self, fault):
        master = self.history.current_master()
        if master is None:
            self.note(fault, fired=time.time(), target=None, effect="no store known yet")
            return
        store_addr, port = (self.job.endpoint().split(":")[0], 29400) if self.job.engine == "c10d" \
            else master
        env = {"PATH": "/usr/bin:/bin", "AML_FLOOD_IDLE": "300", "AML_FLOOD_JUNK": "50"}
        out = open(os.path.join(self.job.work, "out", f"flood.{fault['n']}.txt"), "wb")
        proc = subprocess.Popen(self.hosts.exec_argv(fault["host"], [
            "/usr/bin/python3", STRANGER, "flood", store_addr, str(port), self.job.rdzv_id()], env),
            stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT)
        self.floods.append(proc)
        self.note(fault, fired=time.time(), target={"host": fault["host"], "at": f"{store_addr}:{port}"})
        fault["proc"] = proc
        self.later(fault, "heal", fault["duration"])

    def heal_flood(self, fault):
        proc = fault.pop("proc", None)
        if proc is not None and proc in self.floods:
            self.floods.remove(proc)
            end_flood(proc)
        self.note(fault, healed=time.time())

    def fire_etcd_kill(self, fault):
        member = fault["host"]
        if not self.hosts.etcd_alive(member):
            self.note(fault, fired=time.time(), target=None, effect="member already down")
            return
        self.hosts.etcd_signal(member, signal.SIGKILL)
        self.note(fault, fired=time.time(), target={"member": member})
        self.later(fault, "heal", fault["duration"])

    def heal_etcd_kill(self, fault):
        # In the background: the member takes a moment to rejoin, and other faults go on.
        self.hosts.etcd_restart(fault["host"])
        self.note(fault, healed=time.time())


def end_flood(proc):
    """A flood ends when its stdin closes; one on a paused host cannot hear that, so it is killed."""
    proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
