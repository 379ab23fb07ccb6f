"""Clients that misbehave against a running aml-launch store, while a rendezvous goes on:
a wrong token (must be refused), garbage, a huge length prefix, and a frame cut in the middle
that then stalls. The stalled connection stays open until stdin closes.
usage: bad_store_clients.py HOST PORT   (prints one line per client; exits 1 if the wrong
token was not refused)"""
import socket
import struct
import sys
import time

HOST, PORT = sys.argv[1], int(sys.argv[2])
MAGIC, VERSION, HELLO = 0x534C4D41, 1, 1


def frame(body):
    return struct.pack("<I", len(body)) + body


def hello(token):
    t = token.encode()
    return frame(struct.pack("<BIH", HELLO, MAGIC, VERSION) + struct.pack("<I", len(t)) + t)


def connect():
    """A connection to the store, once it listens: node 0's launcher, started just before, may
    not be there yet on a loaded machine (10 s at most)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return socket.create_connection((HOST, PORT), timeout=5)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def answer(s):
    """The status byte of the reply, or 'closed'."""
    try:
        head = s.recv(4)
        if len(head) < 4:
            return "closed"
        (length,) = struct.unpack("<I", head)
        body = b""
        while len(body) < length:
            chunk = s.recv(length - len(body))
            if not chunk:
                break
            body += chunk
        return {0: "ok", 1: "timeout", 2: "error"}.get(body[0], "?") if body else "closed"
    except (ConnectionResetError, socket.timeout):
        return "closed"


refused = False
s = connect()
s.sendall(hello("not-this-job"))
status = answer(s)
refused = status in ("error", "closed")
print(f"wrong token: {status}", flush=True)

g = connect()
g.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 4)
print(f"garbage: {answer(g)}", flush=True)

h = connect()
h.sendall(struct.pack("<I", 0xFFFFFFF0) + b"\x01")
print(f"huge length: {answer(h)}", flush=True)

stalled = connect()
stalled.sendall(struct.pack("<I", 64) + b"\x02\x05\x00")  # 3 of 64 bytes, then nothing
print("stalled: holding a cut frame open", flush=True)
sys.stdin.read()  # until the test is done
sys.exit(0 if refused else 1)
