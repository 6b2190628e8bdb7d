#!/usr/bin/env python3
"""Replaces an offload bundle entry ID in place (standard library only).

usage: set_entry_id.py FILE OLD NEW

Every occurrence of the bytes OLD in FILE (a fat ELF object or a file of
uncompressed offload bundles) becomes NEW, which must have the same length so
that no offset changes. At least one occurrence must exist.
"""
import sys

path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
if len(old) != len(new):
    sys.exit("set_entry_id.py: '%s' and '%s' differ in length" % (sys.argv[2], sys.argv[3]))
with open(path, "rb") as f:
    data = f.read()
count = data.count(old)
if count == 0:
    sys.exit("set_entry_id.py: '%s' not found in %s" % (sys.argv[2], path))
with open(path, "wb") as f:
    f.write(data.replace(old, new))
