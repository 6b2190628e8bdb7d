#!/usr/bin/env python3
"""Checks a --time-trace file (docs/benchmarks.md, "Time traces"): it must be
valid JSON in Chrome's trace format (complete "X" events with pid, tid, ts,
dur and name; "M" metadata naming the process and threads). Prints, for
FileCheck, the documented events it holds with how many entries (the "#N"
positions of their details) each covers, and whether the entries' work ran on
threads other than the one that started the trace.

usage: check_time_trace.py TRACE
"""
import json
import re
import sys

PER_ENTRY = ["Read", "Hash", "Frame", "Write", "Place"]
# Printed after the threads line: a run with a frame cache (--cache-dir,
# --kpack-cache-dir).
CACHE = ["CacheLookup", "CacheHit", "CacheStore"]
ONCE = ["WriteArchives", "TOC", "Commit"]

with open(sys.argv[1]) as f:
    trace = json.load(f)
events = trace["traceEvents"]
main_tid = None
for e in events:
    for key in ("pid", "tid", "ph", "name"):
        assert key in e, f"event without {key}: {e}"
    if e["ph"] == "M" and e["name"] == "process_name":
        main_tid = e["tid"]
    elif e["ph"] == "X":
        assert isinstance(e["ts"], int) and isinstance(e["dur"], int), e
assert main_tid is not None, "no process_name metadata"
complete = [e for e in events
            if e["ph"] == "X" and not e["name"].startswith("Total ")]
names = {e["name"] for e in complete}
def line(label, words):
    print(" ".join([label] + list(words)))


line("run:", sorted(n for n in names
                    if n.startswith("kpack ") or n == "ld.kpack"))
line("archive events:", [n for n in ONCE if n in names])
def count(name):
    positions = set()
    for e in complete:
        if e["name"] == name:
            m = re.match(r"#(\d+) (\d+)", e.get("args", {}).get("detail", ""))
            assert m, f"{name} event without '#N bytes' detail: {e}"
            positions.add(int(m.group(1)))
    print(f"{name}: {len(positions)} entries")


for name in PER_ENTRY:
    count(name)
work = [e for e in complete if e["name"] in ("Read", "Frame")]
print("entries worked on other threads:",
      "yes" if work and all(e["tid"] != main_tid for e in work) else "no")
if any(n in names for n in CACHE):
    for name in CACHE:
        count(name)
others = sorted(n for n in names if n not in PER_ENTRY + ONCE + CACHE
                and not n.startswith("kpack ") and n != "ld.kpack")
line("other events:", others)
