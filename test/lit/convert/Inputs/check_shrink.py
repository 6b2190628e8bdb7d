"""Checks that a converted binary is smaller than the original by at least
the size of .hip_fatbin minus one page per bundle.

usage: check_shrink.py ORIGINAL CONVERTED   (kpack must be on PATH)
"""
import json
import os
import subprocess
import sys

orig, conv = sys.argv[1], sys.argv[2]
info = json.loads(subprocess.check_output(["kpack", "inspect", "--json", orig]))
fatbin = info["hip_fatbin"]["size"]
bundles = len(info["bundles"])
saved = os.path.getsize(orig) - os.path.getsize(conv)
bound = fatbin - 4096 * bundles
print("bundles %d fatbin %d saved %d bound %d" % (bundles, fatbin, saved, bound))
if saved < bound:
    print("error: the file shrank by less than the bound")
    sys.exit(1)
print("ok")
