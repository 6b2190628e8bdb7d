#!/usr/bin/env python3
"""usage: maxrss.py LIMIT_MIB CMD... -- runs CMD, fails if its peak resident
set (the largest of CMD and its descendants, getrusage RUSAGE_CHILDREN) is
above LIMIT_MIB; prints the peak either way."""
import resource
import subprocess
import sys

if len(sys.argv) < 3:
    sys.exit("usage: maxrss.py LIMIT_MIB CMD...")
limit = int(sys.argv[1])
rc = subprocess.call(sys.argv[2:])
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print("peak RSS %d MiB (limit %d MiB)" % (peak, limit))
if rc != 0:
    sys.exit(rc)
if peak > limit:
    sys.exit("peak RSS %d MiB exceeds %d MiB" % (peak, limit))
