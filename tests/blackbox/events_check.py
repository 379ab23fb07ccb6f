"""Checks an --events-file: every line one JSON object of the events' schema (its keys in
order, a UTC time with milliseconds, times that never go back), and prints each line's kind,
round and rank, so that the test can match the job's story with grep.
usage: /usr/bin/python3 events_check.py FILE"""
import json
import re
import sys

KEYS = ["time", "kind", "node_rank", "host", "run_id", "round", "rank", "details"]
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

last = ""
with open(sys.argv[1], encoding="utf-8") as events:
    for number, line in enumerate(events, 1):
        event = json.loads(line)
        if list(event) != KEYS:
            sys.exit(f"line {number}: keys {list(event)}, expected {KEYS}")
        if not TIME.match(event["time"]) or event["time"] < last:
            sys.exit(f"line {number}: time {event['time']!r} (the line before: {last!r})")
        if not isinstance(event["details"], dict) or not event["run_id"] or not event["host"]:
            sys.exit(f"line {number}: details, run_id or host missing: {line.strip()}")
        last = event["time"]
        rank = "-" if event["rank"] is None else event["rank"]
        detail = event["details"]
        extra = ""
        if event["kind"] in ("worker_exited", "failure"):
            extra = f" {detail['status']}"
        elif event["kind"] == "stop":
            extra = f" {detail['signal']} sender_pid={detail['sender_pid']}"
        elif event["kind"] in ("end", "round_ended"):
            extra = f" exit_code={detail['exit_code']}"
        elif event["kind"] == "rendezvous_formed":
            extra = f" nodes={detail['nodes']}"
        elif event["kind"] in ("node_joined", "node_returned", "node_moved"):
            extra = f" of={detail['node_rank']}"
            if event["kind"] == "node_returned":
                extra += f" away={detail['rounds_away']}"
            if event["kind"] == "node_moved":
                extra += f" from={detail['from_node_rank']}"
        print(f"{event['kind']} node={event['node_rank']} round={event['round']} rank={rank}{extra}")
