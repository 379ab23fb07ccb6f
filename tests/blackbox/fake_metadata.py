"""A metadata service of the tests' own, on loopback: Azure's Scheduled Events, AWS's spot
instance-action and GCP's preempted, as the platforms answer them, from a scenario.

usage: fake_metadata.py PORT_FILE SCENARIO VM [AFTER_S] [AHEAD_S]
  PORT_FILE  where the port it listens on is written (it picks a free one)
  SCENARIO   preempt | other-vm | freeze | malformed | hang | huge | aws | gcp
  VM         this VM's name (Azure's compute name)
  AFTER_S    the event appears this long after the start (1)
  AHEAD_S    its NotBefore / time this far ahead of when it appears (30)
Each answer that first carries the event writes its time (time.time()) to PORT_FILE.event.
With EVENT_AFTER_FILES (paths, space-separated), the event also waits until they all exist (the
workers are up), and its time ahead counts from when it appears.
"""
import email.utils
import http.server
import json
import os
import sys
import threading
import time

port_file, scenario, vm = sys.argv[1], sys.argv[2], sys.argv[3]
after = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
ahead = float(sys.argv[5]) if len(sys.argv) > 5 else 30.0
start = time.time()
told = threading.Event()
after_files = os.environ.get("EVENT_AFTER_FILES", "").split()
appeared = []  # when the event first was due


def event_due():
    if time.time() - start < after or not all(os.path.exists(p) for p in after_files):
        return False
    if not appeared:
        appeared.append(time.time())
    return True


def event_time():
    return appeared[0] if appeared else start + after


def mark_told():
    if not told.is_set():
        told.set()
        with open(port_file + ".event", "w") as f:
            f.write(repr(time.time()))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the launcher stops reading an answer that is too large

    def azure(self):
        if self.headers.get("Metadata") != "true":
            return self.answer(400, '{"error": "Bad request: Metadata header"}')
        if self.path.startswith("/metadata/instance/compute/name"):
            return self.answer(200, vm, "text/plain")
        if not self.path.startswith("/metadata/scheduledevents"):
            return self.answer(404, "{}")
        if scenario == "hang":
            time.sleep(3600)
        if scenario == "huge":
            return self.answer(200, "[" + "0," * (512 * 1024) + "0]")
        if scenario == "malformed":
            return self.answer(200, "<html>not the document</html>")
        events = []
        if event_due():
            kind = {"freeze": "Freeze"}.get(scenario, "Preempt")
            who = "another-vm" if scenario == "other-vm" else vm
            events.append({"EventId": "602d9444-d2cd-49c7-8624-8643e7171297",
                           "EventStatus": "Scheduled", "EventType": kind,
                           "ResourceType": "VirtualMachine", "Resources": [who],
                           "NotBefore": email.utils.formatdate(event_time() + ahead, usegmt=True),
                           "DurationInSeconds": 5 if kind == "Freeze" else -1,
                           "Description": "Virtual machine is being preempted.",
                           "EventSource": "Platform"})
        body = json.dumps({"DocumentIncarnation": 2 if events else 1, "Events": events})
        self.answer(200, body)
        if events:
            mark_told()

    def do_GET(self):
        if scenario == "aws":
            if self.path != "/latest/meta-data/spot/instance-action":
                return self.answer(404, "")
            if self.headers.get("X-aws-ec2-metadata-token") != "token-1":
                return self.answer(401, "")
            if not event_due():
                return self.answer(404, "")
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(event_time() + ahead))
            self.answer(200, json.dumps({"action": "terminate", "time": when}))
            return mark_told()
        if scenario == "gcp":
            if self.headers.get("Metadata-Flavor") != "Google":
                return self.answer(403, "")
            self.answer(200, "TRUE" if event_due() else "FALSE", "text/plain")
            if event_due():
                mark_told()
            return
        self.azure()

    def do_PUT(self):
        if scenario == "aws" and self.path == "/latest/api/token":
            return self.answer(200, "token-1", "text/plain")
        self.answer(404, "")


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(port_file + ".part", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".part", port_file)
server.serve_forever()
