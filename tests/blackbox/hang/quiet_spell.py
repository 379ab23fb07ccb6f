# A rank that shows progress once ("step 0"), then falls quiet; what it does next is the case:
#   sleep S   sleeps S s without a word, then prints "step 1 at <time>" and ends (0)
#   spin S    rank 0 computes S s without a word (the others sleep), then as above
#   stuck     sleeps for ever; SIGINT: prints "rank R got SIGINT" and ends (130)
#   fail S    rank 1 ends with 3 after S s without a word; the others are stuck
import os
import signal
import sys
import time

rank = int(os.environ["RANK"])
mode = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 0


def interrupted(signum, frame):
    print("rank", rank, "got SIGINT", flush=True)
    os._exit(130)


signal.signal(signal.SIGINT, interrupted)
print("step 0", flush=True)
if mode == "sleep" or (mode == "spin" and rank != 0):
    time.sleep(seconds)
elif mode == "spin":
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
elif mode == "fail" and rank == 1:
    time.sleep(seconds)
    sys.exit(3)
else:
    while True:
        time.sleep(600)
print(f"step 1 at {time.time():.3f}", flush=True)
