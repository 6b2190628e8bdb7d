#!/usr/bin/env python3
"""Checks wheels as pip and `wheel` read them: RECORD lists every file once
with its sha256 (urlsafe base64, no padding) and size, and nothing else
(RECORD itself without hash); no directory or symlink entries; the
.dist-info directory matches the file name; entries in `wheel`'s order
(.dist-info last, RECORD last); every timestamp 1980-01-01 00:00:00.

usage: check_record.py WHEEL...
Prints "ok <file name>: N files" per wheel; exits 1 on the first problem.
"""
import base64
import csv
import hashlib
import io
import os
import stat
import sys
import zipfile


def fail(wheel, msg):
    print("FAIL %s: %s" % (os.path.basename(wheel), msg))
    sys.exit(1)


def check(path):
    base = os.path.basename(path)
    parts = base[:-len(".whl")].split("-")
    dist_info = "%s-%s.dist-info" % (parts[0], parts[1])
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        names = [i.filename for i in infos]
        if len(set(names)) != len(names):
            fail(path, "duplicate entries")
        for i in infos:
            if i.is_dir():
                fail(path, "directory entry " + i.filename)
            if stat.S_ISLNK(i.external_attr >> 16):
                fail(path, "symlink entry " + i.filename)
            if i.date_time != (1980, 1, 1, 0, 0, 0):
                fail(path, "timestamp %s of %s" % (i.date_time, i.filename))
        record_name = dist_info + "/RECORD"
        if names[-1] != record_name:
            fail(path, "last entry is %s, not %s" % (names[-1], record_name))
        first_meta = min(k for k, n in enumerate(names) if n.startswith(dist_info + "/"))
        if any(not n.startswith(dist_info + "/") for n in names[first_meta:]):
            fail(path, ".dist-info entries are not last")
        rows = list(csv.reader(io.TextIOWrapper(z.open(record_name), encoding="utf-8",
                                                newline="")))
        listed = {}
        for row in rows:
            if len(row) != 3:
                fail(path, "RECORD row %r" % row)
            listed[row[0]] = row
        if set(listed) != set(names):
            fail(path, "RECORD lists %s, the wheel holds %s" % (
                sorted(set(listed) ^ set(names)), ""))
        if [r[0] for r in rows] != names:
            fail(path, "RECORD is not in the wheel's order")
        for name in names:
            _, h, size = listed[name]
            if name == record_name:
                if h or size:
                    fail(path, "RECORD has a hash of itself")
                continue
            data = z.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
            if h != "sha256=" + digest.rstrip(b"=").decode():
                fail(path, "hash of %s" % name)
            if size != str(len(data)):
                fail(path, "size of %s" % name)
    print("ok %s: %d files" % (base, len(names)))


def main():
    for w in sys.argv[1:]:
        check(w)


if __name__ == "__main__":
    main()
