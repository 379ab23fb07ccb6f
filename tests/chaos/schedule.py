"""The nemesis's schedule: faults drawn from a seed, printed before the campaign starts, and the same
for the same seed, engine, hosts, minutes and rate (replayable).

A fault names its kind, its time from the campaign's start, a host (or an index that picks one of
the hosts the fault can hit when it fires: "a seated host's worker"), and a duration where it has
one. The healing half of a fault (SIGCONT, the rules removed, a launcher or etcd member started
again) is part of the same fault.
"""
import random

# kind: (weight, engines, what it does, what the docs say it does)
KINDS = {
    "kill_launcher": (2.0, ("c10d", "etcd"),
                      "kill -9 of a launcher, started again after the duration",
                      "a seated launcher's loss is heard at once and a spare takes the seat; "
                      "its host comes back benched (a spare of last resort)"),
    "kill_worker": (2.0, ("c10d", "etcd"), "kill -9 of one worker of a seated host",
                    "the round ends on every node and the next starts at once"),
    "pause": (2.0, ("c10d", "etcd"), "SIGSTOP of every process of a host, SIGCONT after the duration",
              "shorter than --node-timeout: the seat is kept; longer: the seat is lost"),
    "partition": (1.5, ("c10d", "etcd"), "a host cut off both ways by nft rules for the duration",
                  "shorter than --node-timeout: the seat is kept; longer: the seat is lost"),
    "sick": (1.0, ("c10d", "etcd"), "--health-command fails on a host for the duration",
             "a round formed meanwhile benches the host"),
    "notice": (0.5, ("c10d", "etcd"), "a Preempt notice from a host's metadata stand-in",
               "every worker saves and exits 0; every launcher exits 200 (the campaign requeues)"),
    "flood": (1.0, ("c10d", "etcd"), "strangers' connections at the store's port for the duration",
              "the job runs on"),
    "etcd_kill": (1.0, ("etcd",), "kill -9 of an etcd member, started again after the duration",
                  "a quorum remains: the job runs on"),
    "kill_node0": (1.0, ("etcd",), "kill -9 of the round's node 0 launcher, started again after the duration",
                   "the next round forms without it; it comes back benched"),
}


def parse_mix(text):
    """--mix "pause=4,etcd_kill=2": each kind's weight in place of its usual one (0 leaves it out).
    A campaign aimed at one family of faults (a bug seen once after a lease's end) meets it more
    often. ValueError names what is wrong."""
    mix = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, _, weight = part.partition("=")
        if kind not in KINDS:
            raise ValueError(f"--mix: no fault kind {kind!r} (kinds: {', '.join(KINDS)})")
        try:
            mix[kind] = float(weight)
        except ValueError:
            raise ValueError(f"--mix: {part!r} needs a number after '=' (pause=4)") from None
        if mix[kind] < 0:
            raise ValueError(f"--mix: {part!r}: a weight is 0 or more")
    return mix


def kinds_for(engine, mix):
    """The fault kinds an engine's campaign draws, with their weights under the mix (parse_mix's;
    None: the usual ones). ValueError where the mix leaves none."""
    mix = mix or {}
    kinds = [(k, mix.get(k, v[0])) for k, v in KINDS.items() if engine in v[1]]
    kinds = [(k, w) for k, w in kinds if w > 0]
    if not kinds:
        raise ValueError(f"--mix leaves no fault kind for {engine}")
    return kinds


def draw(seed, engine, hosts, minutes, per_minute, node_timeout, etcd_members=(), warmup=20.0,
         mix=None):
    """The campaign's faults, in time order: dicts with at, kind, host, pick, duration. mix: the
    weights parse_mix gave (the same seed and mix draw the same schedule)."""
    mix = mix or {}
    tag = "".join(f"/{k}={mix[k]:g}" for k in sorted(mix))  # "" for the usual mix: seeds keep theirs
    rng = random.Random(f"{seed}/{engine}/{hosts}/{minutes}/{per_minute}{tag}")
    kinds, weights = zip(*kinds_for(engine, mix))
    count = max(1, round(minutes * per_minute))
    span = minutes * 60.0
    gap = span / count
    faults = []
    for i in range(count):
        at = warmup + i * gap + rng.uniform(0, gap * 0.8)
        kind = rng.choices(kinds, weights)[0]
        # Under node 0's store the store's host (host 0) is never killed, paused past the node
        # timeout or cut off: the job's rendezvous lives there, and the docs say the others then
        # wait --rdzv-timeout for it (launcher.store_comeback tests that alone).
        store_host = 0 if engine == "c10d" else None
        host = rng.randrange(hosts)
        duration = round(rng.uniform(2.0, 30.0), 1)
        if kind in ("kill_launcher", "partition") and host == store_host:
            host = rng.randrange(1, hosts)
        if kind == "pause" and host == store_host:
            duration = round(rng.uniform(2.0, max(2.5, node_timeout - 2)), 1)
        if kind in ("kill_launcher", "etcd_kill", "kill_node0"):
            duration = round(rng.uniform(2.0, 20.0), 1)
        if kind == "etcd_kill":
            host = rng.choice(list(etcd_members))
        faults.append({"n": i + 1, "at": round(at, 1), "kind": kind, "host": host,
                       "pick": rng.randrange(1000), "duration": duration})
    return faults


def describe(faults, engine, seed, mix=None):
    aimed = f", --mix {','.join(f'{k}={mix[k]:g}' for k in sorted(mix))}" if mix else ""
    lines = [f"schedule: seed {seed}, engine {engine}, {len(faults)} faults{aimed}"]
    for f in faults:
        target = "the round's node 0" if f["kind"] == "kill_node0" else (
            f"a seated host's worker (pick {f['pick']})" if f["kind"] == "kill_worker" else
            f"etcd member on host {f['host']}" if f["kind"] == "etcd_kill" else f"host {f['host']}")
        lines.append(f"  #{f['n']:<3} t={f['at']:7.1f}s {f['kind']:<14} {target:<36} {f['duration']:5.1f}s")
    return "\n".join(lines)
