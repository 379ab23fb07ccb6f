#!/usr/bin/env python3
"""A stranger at a job's rendezvous store: a client of its own that speaks the store's wire format
(protocol 2, DESIGN §5) and computes the handshake's proofs independently of the project's code.

usage: store_stranger.py MODE HOST PORT RUN_ID [SECRET_FILE]
  abort      join (as a launcher, with SECRET_FILE's secret, or none) and write a forged abort
             record for round 0 of the run: prints 'admitted' and exits 0, or 'refused: WHY', exit 3
  admit      the same handshake as a worker, then one set and get: the positive control that
             this client speaks the protocol (exit 0 admitted, 3 refused)
  replay     a real handshake with SECRET_FILE's secret, recorded, then its frames sent again on a
             new connection: exit 0 when the store refused the replay
  reflect    no secret: the store's own proof sent back as the client's: exit 0 when refused
  wrong-role the workers' key presented as a launcher's: exit 0 when refused
  worker-abort  a worker of the job (AML_LAUNCH_STORE_KEY from aml-launch) writing the launchers'
             abort record: exit 0 when the store refused it
  munge      the handshake with munge credentials (munge(1) at AML_MUNGE_SOCKET) sealed as whoever
             runs this: the job's user is admitted (exit 0), another UID refused (exit 3)
  fake-store serve a store at PORT on HOST that answers every HELLO with a challenge whose proof
             is made with SECRET_FILE's secret (a wrong one) until killed; prints each HELLO
  flood      hostile traffic for as long as stdin stays open: IDLE connections that never speak,
             JUNK that send random bytes or a huge length prefix, held HOLD seconds and made
             again (AML_FLOOD_IDLE 2000, AML_FLOOD_JUNK 200, AML_FLOOD_HOLD 6); prints how many
             it made and how many the store closed first
"""
import hashlib
import hmac
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time

MAGIC, VERSION = 0x534C4D41, 2
HELLO, SET, GET, PROVE = 1, 2, 3, 15
AUTH_NONE, AUTH_KEY, AUTH_MUNGE = 0, 1, 2
LAUNCHER, WORKER, STORE = b"L", b"W", b"S"


def field(b):
    return struct.pack("<I", len(b)) + b


def frame(body):
    return struct.pack("<I", len(body)) + body


def role_key(secret, job, role):
    return hmac.new(secret, b"aml-launch role key v1" + role + field(job), hashlib.sha256).digest()


def proof(key, prover, client, job, member, nc, ns):
    message = b"aml-launch store proof v2" + prover + client + field(job) + field(member) + field(nc) + field(ns)
    return hmac.new(key, message, hashlib.sha256).digest()


def read_frame(s):
    head = b""
    while len(head) < 4:
        chunk = s.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (length,) = struct.unpack("<I", head)
    body = b""
    while len(body) < length:
        chunk = s.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    return body


def text_of(body):
    """An error reply's message, or a description of what came."""
    if body is None:
        return "the store closed the connection"
    if body[0] == 2 and len(body) >= 5:
        (n,) = struct.unpack_from("<I", body, 1)
        return body[5:5 + n].decode(errors="replace")
    return f"status {body[0]}"


def hello_frame(job, auth, role, member, nonce):
    return frame(struct.pack("<BIH", HELLO, MAGIC, VERSION) + field(job) + bytes([auth]) + role + field(member) + field(nonce))


class Refused(Exception):
    pass


def handshake(host, port, job, secret, role, sent=None, key=None):
    """A connected, admitted socket; raises Refused with the store's reason."""
    s = socket.create_connection((host, port), timeout=10)
    member = b"a stranger"
    auth = AUTH_KEY if secret or key else AUTH_NONE
    nc = os.urandom(32) if auth == AUTH_KEY else b""
    first = hello_frame(job, auth, role, member, nc)
    s.sendall(first)
    reply = read_frame(s)
    if reply is None or reply[0] != 0:
        raise Refused(text_of(reply))
    if auth == AUTH_NONE:
        return s
    kind = reply[1]
    (n,) = struct.unpack_from("<I", reply, 2)
    ns = reply[6:6 + n]
    (m,) = struct.unpack_from("<I", reply, 6 + n)
    theirs = reply[10 + n:10 + n + m]
    key = key or role_key(secret, job, role)
    if kind != AUTH_KEY or not hmac.compare_digest(theirs, proof(key, STORE, role, job, member, nc, ns)):
        raise Refused("the store's proof is wrong")
    second = frame(bytes([PROVE]) + field(proof(key, role, role, job, member, nc, ns)))
    s.sendall(second)
    if sent is not None:
        sent += [first, second]
    reply = read_frame(s)
    if reply is None or reply[0] != 0:
        raise Refused(text_of(reply))
    return s


def forged_abort():
    record = ('{"node_rank": 1, "member": 1, "host": "stranger", "rank": 1, "local_rank": 0, "pid": 1, '
              '"exit_code": 99, "stop_signal": 0, "status": "exit code 99", "time": "", '
              '"stderr_tail": ["stopped by a stranger"]}')
    return frame(bytes([SET]) + field(b"aml/run/0/abort") + field(record.encode()))


def main(argv):
    mode, host, port, job = argv[0], argv[1], int(argv[2]), argv[3].encode()
    secret = open(argv[4], "rb").read().rstrip(b"\r\n") if len(argv) > 4 and argv[4] else b""
    if mode in ("abort", "admit"):
        role = LAUNCHER if mode == "abort" else WORKER
        try:
            s = handshake(host, port, job, secret, role)
        except (Refused, OSError) as e:
            print(f"refused: {e}")
            return 3
        if mode == "abort":
            s.sendall(forged_abort())
        else:
            s.sendall(frame(bytes([SET]) + field(b"user/hello") + field(b"world")))
        print("admitted", text_of(read_frame(s)))
        return 0
    if mode == "replay":
        sent = []
        handshake(host, port, job, secret, WORKER, sent).close()  # a real handshake, recorded
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(sent[0])
        read_frame(s)  # a new challenge: a new nonce
        s.sendall(sent[1])
        reply = read_frame(s)
        print("replay:", text_of(reply))
        return 0 if reply is None or reply[0] != 0 else 1
    if mode == "reflect":
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(hello_frame(job, AUTH_KEY, LAUNCHER, b"a stranger", os.urandom(32)))
        reply = read_frame(s)
        if reply is None or reply[0] != 0:
            print("reflect: refused at HELLO:", text_of(reply))
            return 0
        (n,) = struct.unpack_from("<I", reply, 2)
        (m,) = struct.unpack_from("<I", reply, 6 + n)
        s.sendall(frame(bytes([PROVE]) + field(reply[10 + n:10 + n + m])))
        reply = read_frame(s)
        print("reflect:", text_of(reply))
        return 0 if reply is None or reply[0] != 0 else 1
    if mode == "wrong-role":
        # The workers' key is all a worker has: it must not prove a launcher.
        s = socket.create_connection((host, port), timeout=10)
        nc = os.urandom(32)
        member = b"a worker"
        s.sendall(hello_frame(job, AUTH_KEY, LAUNCHER, member, nc))
        reply = read_frame(s)
        (n,) = struct.unpack_from("<I", reply, 2)
        ns = reply[6:6 + n]
        worker_key = role_key(secret, job, WORKER)
        s.sendall(frame(bytes([PROVE]) + field(proof(worker_key, LAUNCHER, LAUNCHER, job, member, nc, ns))))
        reply = read_frame(s)
        print("wrong-role:", text_of(reply))
        return 0 if reply is None or reply[0] != 0 else 1
    if mode == "worker-abort":
        s = handshake(host, port, job, b"", WORKER, key=bytes.fromhex(os.environ["AML_LAUNCH_STORE_KEY"]))
        s.sendall(forged_abort())
        reply = read_frame(s)
        print("worker-abort:", text_of(reply))
        return 0 if reply is None or reply[0] != 0 else 1
    if mode == "munge":
        s = socket.create_connection((host, port), timeout=10)
        nc, member = os.urandom(32), b"a stranger"
        s.sendall(hello_frame(job, AUTH_MUNGE, LAUNCHER, member, nc))
        reply = read_frame(s)
        if reply is None or reply[0] != 0:
            print("refused:", text_of(reply))
            return 3
        (n,) = struct.unpack_from("<I", reply, 2)
        ns = reply[6:6 + n]
        message = (b"aml-launch store proof v2" + LAUNCHER + LAUNCHER + field(job) + field(member)
                   + field(nc) + field(ns))
        sealed = subprocess.run(["munge", "--socket", os.environ["AML_MUNGE_SOCKET"]], input=message,
                                capture_output=True, check=True).stdout.strip()
        s.sendall(frame(bytes([PROVE]) + field(sealed)))
        reply = read_frame(s)
        if reply is None or reply[0] != 0:
            print("refused:", text_of(reply))
            return 3
        print("admitted")
        return 0
    if mode == "fake-store":
        listener = socket.create_server((host, port), reuse_port=False)
        while True:
            c, _ = listener.accept()
            body = read_frame(c)
            if body is None:
                continue
            key = role_key(secret, job, LAUNCHER)
            fake = proof(key, STORE, LAUNCHER, job, b"?", b"?", b"?")
            c.sendall(frame(bytes([0, AUTH_KEY]) + field(os.urandom(32)) + field(fake)))
            print("fake-store: answered a HELLO", flush=True)
            threading.Thread(target=lambda c=c: (read_frame(c), c.close()), daemon=True).start()
    if mode == "flood":
        idle = int(os.environ.get("AML_FLOOD_IDLE", "2000"))
        junk = int(os.environ.get("AML_FLOOD_JUNK", "200"))
        hold = float(os.environ.get("AML_FLOOD_HOLD", "6"))
        held, made, closed_first = [], 0, 0

        def count_closed():
            nonlocal closed_first
            for s in held:
                s.setblocking(False)
                try:
                    while s.recv(4096):  # the store's reason, then the end
                        pass
                    closed_first += 1
                except BlockingIOError:
                    pass  # still open
                except OSError:
                    closed_first += 1
                s.close()
            held.clear()

        while not select.select([sys.stdin], [], [], 0)[0]:
            count_closed()
            for i in range(idle + junk):
                try:
                    s = socket.create_connection((host, port), timeout=5)
                except OSError:
                    continue
                if i >= idle:
                    s.sendall(struct.pack("<I", 0xFFFFFFF0) if i % 2 else os.urandom(512))
                held.append(s)
                made += 1
            # Held until the next round (none made yet: the store is not up; try again soon).
            select.select([sys.stdin], [], [], hold if held else 0.1)
        count_closed()
        print("flood: made", made, "connections; the store closed", closed_first, "of them first", flush=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
