"""The notice of this node's end (preemption, maintenance), as aml-launch hands it to workers.

When a notice comes (the platform's metadata service, a scheduler's signal, another node),
aml-launch writes it to the file named by AML_LAUNCH_NOTICE_FILE and sends every worker
--notice-to-workers (SIGUSR1 by default). A training loop asks at each step:

    notice = aml_launch.notice()
    if notice is not None:
        save_checkpoint()   # every rank sees the same notice within a moment
        sys.exit(0)         # the job ends as "preempted" (exit 200), not as a failure
"""
import json
import os
import time


def notice():
    """The notice as a dict, or None while there is none (one stat of a file per call).

    Keys: kind (preempt, terminate, reboot, redeploy, freeze, signal), source, node_rank,
    host, detail, deadline (ISO 8601 UTC or None), deadline_unix, seconds_left (now, or
    None where the platform gave no time), duration_seconds (a freeze's)."""
    path = os.environ.get("AML_LAUNCH_NOTICE_FILE")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # replaced whole, so a reader never sees half of it; anything else: none yet
    if not isinstance(found, dict):
        return None
    deadline = found.get("deadline_unix")
    found["seconds_left"] = max(0.0, deadline - time.time()) if isinstance(deadline, int) else None
    return found
