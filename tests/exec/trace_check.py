#!/usr/bin/env python3
"""trace_check.py SCHEDULE TRACE_DIR CHUNK_BYTES HOSTS

Checks a `collstep run --trace` directory against the schedule it ran
(text format, `collstep gen`), for a message size where every chunk holds
CHUNK_BYTES bytes: trace.json and summary.json parse, the live backend
wrote them, the step count (summary, steps.csv) is the schedule's, and the
bytes of tier "host" / "network" equal the schedule's send traffic between
ranks of the same / different hosts.  HOSTS names each rank's host, comma
separated ("a,a,b").  Prints the figures; exit status 1 on any mismatch.
"""
import json
import re
import sys

sched, tr, chunk_bytes, hosts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
steps = 0
want = {"host": 0, "network": 0}
rank = None
for line in open(sched):
    m = re.match(r"rank (\d+)", line)
    if m:
        rank = int(m.group(1))
        continue
    if rank is None or not re.match(r"\s+\d+: \w+", line):
        continue
    steps += 1
    m = re.match(r"\s+\d+: send to (\d+)(?: chan \d+)? \w+\[(\d+):(\d+)\]", line)
    if m:
        peer, a, b = int(m.group(1)), int(m.group(2)), int(m.group(3))
        want["host" if hosts[rank] == hosts[peer] else "network"] += (b - a) * chunk_bytes
bad = 0


def check(cond, what):
    global bad
    if not cond:
        print("FAIL:", what)
        bad += 1


trace = json.load(open(tr + "/trace.json"))
check(isinstance(trace, dict) and trace.get("traceEvents"), "trace.json has no traceEvents")
summ = json.load(open(tr + "/summary.json"))
check(summ["meta"]["backend"] == "live", "backend is %s" % summ["meta"]["backend"])
check(summ["steps"] == steps, "summary steps %d, schedule %d" % (summ["steps"], steps))
check(summ["steps_kept"] == steps, "steps_kept %d" % summ["steps_kept"])
nrows = sum(1 for _ in open(tr + "/steps.csv")) - 1
check(nrows == steps, "steps.csv has %d rows, schedule %d steps" % (nrows, steps))
got = {t["tier"]: t["bytes"] for t in summ["tiers"]}
for tier in ("host", "network"):
    check(int(got.get(tier, 0)) == want[tier],
          "tier %s: %s bytes, schedule %d" % (tier, got.get(tier), want[tier]))
print("steps %d, tier bytes %s, schedule %s, platform %s" % (steps, got, want, summ["meta"]["platform"]))
sys.exit(1 if bad else 0)
