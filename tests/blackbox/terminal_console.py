"""aml-launch with a terminal (a pseudo-terminal) as its stdout and stderr.

usage: /usr/bin/python3 terminal_console.py read|single|stalled AML_LAUNCH
  read:    2 workers write 20,000 numbered lines each; every line must come through the
           terminal, tagged, and the terminal's own description must not be left non-blocking
           (the launcher writes through a description of its own).
  single:  the one worker, untagged, has the terminal itself as its stdout (isatty: progress
           bars and colours work as without a launcher), and its stderr comes through; it
           gets no PYTHONUNBUFFERED=1 (Python line-buffers a terminal: one write per line,
           which keeps ranks' lines whole where mpirun merges their ptys).
  stalled: nobody reads the terminal while 2 workers flood it; TERM after 2 s must still stop
           the job (143) within 10 s, failure summary and all, with no process of it left.
  ctrlc:   the terminal is the launcher's controlling terminal and Ctrl-C is typed on it: the
           2 Python workers' KeyboardInterrupt handlers run to their end, the launcher says it
           was stopped by SIGINT (from no process: the terminal) and exits 130.
Exits 0 when all holds, 1 with the reason on stderr otherwise.
"""
import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
import uuid

mode, aml = sys.argv[1], sys.argv[2]
master, terminal = pty.openpty()
mark = f"aml-terminal-{uuid.uuid4()}"
env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/"), "MARK": mark}
if mode == "read":
    command = [aml, "--nproc-per-node", "2", "--", "sh", "-c", 'seq -f "line %g" 20000']
elif mode == "single":
    command = [aml, "--", "sh", "-c",
               '[ -t 1 ] && echo "stdout is a terminal"; echo "PYTHONUNBUFFERED=${PYTHONUNBUFFERED-unset}"; '
               'echo "on stderr" >&2']
elif mode == "ctrlc":
    command = [aml, "--nproc-per-node", "2", "--", "/usr/bin/python3", "-c",
               'import time\ntry:\n    print("up", flush=True); time.sleep(60)\n'
               'except KeyboardInterrupt:\n    time.sleep(0.3); print("checkpoint saved", flush=True)']
else:
    # 20 stderr lines of 3,000 bytes first: the summary that TERM brings (with a worker's
    # last stderr lines) is then more than the full terminal could take.
    command = [aml, "--nproc-per-node", "2", "--", "sh", "-c",
               'head -c 60000 /dev/zero | tr "\\0" y | fold -w 3000 >&2; '
               'head -c 20000000 /dev/zero | tr "\\0" x | fold -w 99; sleep 60']


def take_the_terminal():
    """In the launcher before exec: its new session's controlling terminal is the pty."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


launcher = subprocess.Popen(command, stdin=terminal if mode == "ctrlc" else subprocess.DEVNULL,
                            stdout=terminal, stderr=terminal, env=env, start_new_session=True,
                            preexec_fn=take_the_terminal if mode == "ctrlc" else None)


def fail(reason):
    launcher.kill()
    print(reason, file=sys.stderr)
    sys.exit(1)


def left_behind():
    found = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                found += f"MARK={mark}".encode() in f.read()
        except OSError:
            pass
    return found


if mode in ("read", "single"):
    output = b""
    deadline = time.monotonic() + 30
    while launcher.poll() is None or select.select([master], [], [], 0)[0]:
        if time.monotonic() > deadline:
            fail("the launcher did not finish within 30 s")
        if select.select([master], [], [], 0.1)[0]:
            try:
                output += os.read(master, 1 << 16)
            except OSError:  # EIO: nobody has the terminal open any more
                break
    if launcher.returncode != 0:
        fail(f"exit status {launcher.returncode}")
    lines = output.replace(b"\r\n", b"\n").split(b"\n")
    if mode == "single":
        if b"stdout is a terminal" not in lines or b"on stderr" not in lines:
            fail(f"want the worker's stdout to be the terminal, and its stderr: {output!r}")
        if b"PYTHONUNBUFFERED=unset" not in lines:
            fail(f"want no PYTHONUNBUFFERED for a worker writing to the terminal itself: {output!r}")
        sys.exit(0)
    for rank in (0, 1):
        got = [l for l in lines if l.startswith(b"[rank %d] " % rank)]
        want = [b"[rank %d] line %d" % (rank, i) for i in range(1, 20001)]
        if got != want:
            fail(f"rank {rank}: {len(got)} lines of 20000, or out of order")
    if fcntl.fcntl(terminal, fcntl.F_GETFL) & os.O_NONBLOCK:
        fail("the terminal's shared description was left non-blocking")
elif mode == "ctrlc":
    output = b""
    deadline = time.monotonic() + 30
    typed = False
    while launcher.poll() is None or select.select([master], [], [], 0)[0]:
        if time.monotonic() > deadline:
            fail(f"the launcher did not finish within 30 s: {output!r}")
        if not typed and output.count(b"] up") == 2:
            os.write(master, b"\x03")  # Ctrl-C: SIGINT to the terminal's foreground group
            typed = True
        if select.select([master], [], [], 0.1)[0]:
            try:
                output += os.read(master, 1 << 16)
            except OSError:
                break
    text = output.decode(errors="replace")
    if launcher.returncode != 130:
        fail(f"exit status {launcher.returncode}, want 130: {text}")
    if text.count("checkpoint saved") != 2:
        fail(f"want both KeyboardInterrupt handlers to end: {text}")
    if "stopped by SIGINT from outside at" not in text or "failed first" in text:
        fail(f"want a stop by SIGINT from the terminal (no sender), no failure: {text}")
else:
    time.sleep(2)  # the terminal's buffer is full long before this
    launcher.send_signal(signal.SIGTERM)
    try:
        status = launcher.wait(timeout=10)
    except subprocess.TimeoutExpired:
        fail("TERM did not stop the launcher within 10 s")
    if status != 143:
        fail(f"exit status {status}, want 143")
    time.sleep(0.2)
    if left_behind():
        fail(f"{left_behind()} process(es) of the job left")
