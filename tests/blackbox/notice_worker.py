"""A worker of the notice tests: it waits for the notice (aml_launch.notice(), the package's own
pure-Python reader, loaded from its file) and says when it came, then exits 0; with
NOTICE_IGNORE=1 it runs on until it is stopped; without a notice it exits 0 after NOTICE_RUN_S
(a SIGUSR1 without a notice is said too: $W/signal.RANK).

Writes $W/got.RANK: "KIND SOURCE NODE SECONDS_LEFT SIGNAL_AT FILE_AT" (times: time.time())."""
import importlib.util
import os
import signal
import sys
import time

spec = importlib.util.spec_from_file_location("notice_reader", sys.argv[1])
reader = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reader)

signal_at = []
signal.signal(signal.SIGUSR1, lambda *_: signal_at.append(time.time()))
rank = os.environ["RANK"]
out = os.path.join(os.environ["W"], "got." + rank)
deadline = time.time() + float(os.environ.get("NOTICE_RUN_S", "60"))
open(os.path.join(os.environ["W"], "up." + rank), "w").close()
while time.time() < deadline:
    if signal_at and not os.path.exists(out + ".signal"):
        open(out + ".signal", "w").write(repr(signal_at[0]))
    found = reader.notice()
    if found is not None:
        left = found["seconds_left"]
        line = "%s %s %s %s %r %r" % (found["kind"], found["source"], found["node_rank"],
                                      "none" if left is None else round(left),
                                      signal_at[0] if signal_at else 0.0, time.time())
        with open(out + ".part", "w") as f:
            f.write(line + "\n")
        os.rename(out + ".part", out)
        print("rank", rank, "notice:", line, flush=True)
        if os.environ.get("NOTICE_IGNORE") != "1":
            sys.exit(0)
        while True:
            time.sleep(0.05)
    time.sleep(0.02)
print("rank", rank, "no notice", flush=True)
