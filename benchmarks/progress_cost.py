"""The progress API's cost from Python: aml_launch.progress() goes through ctypes to
aml_progress() (one atomic add in the page the launcher shares). Measured against the Python
loop alone and against the cheapest output a rank could use to look alive instead (a line
written and flushed to /dev/null). The page is made here as aml-launch makes it (a memfd named
by AML_LAUNCH_PROGRESS_FD).

usage: /usr/bin/python3 benchmarks/progress_cost.py BUILD_DIR
"""
import ctypes
import mmap
import os
import struct
import sys
import time

N = 2_000_000


def page():
    fd = os.memfd_create("aml-launch-progress")
    os.ftruncate(fd, 4096)
    m = mmap.mmap(fd, 4096)
    struct.pack_into("<QQq", m, 0, 0x31474F52504C4D41, 0, -1)  # magic "AMLPROG1", calls, step
    os.environ["AML_LAUNCH_PROGRESS_FD"] = str(fd)
    return m


def per_call_ns(fn):
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter_ns()
        fn()
        best = min(best, (time.perf_counter_ns() - start) / N)
    return best


def main():
    build = sys.argv[1]
    shared = page()
    lib = ctypes.CDLL(os.path.join(build, "src", "libaml_rank.so"))
    lib.aml_progress.argtypes = [ctypes.c_longlong]
    lib.aml_progress.restype = None
    progress = lib.aml_progress

    def loop():
        for step in range(N):
            pass

    def with_progress():
        for step in range(N):
            progress(step)

    null = open(os.devnull, "w")

    def with_output():
        for step in range(N):
            null.write("step\n")
            null.flush()

    base = per_call_ns(loop)
    progress_ns = per_call_ns(with_progress) - base
    calls = struct.unpack_from("<QQq", shared, 0)[1]  # what the launcher would read
    print(f"python loop alone:                  {base:7.1f} ns a step")
    print(f"aml_progress() through ctypes:      {progress_ns:7.1f} ns a call "
          f"(the shared page counted {calls} calls)")
    print(f"a line written and flushed:         {per_call_ns(with_output) - base:7.1f} ns a line")


if __name__ == "__main__":
    main()
