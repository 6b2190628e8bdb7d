#!/usr/bin/env python3
"""Packs a directory tree into a wheel the way `wheel` (bdist_wheel's
WheelFile.write_files) does: os.walk with sorted names, symlinks read
through (a symlinked soname becomes a copy: wheels hold no symlinks), the
.dist-info files last, RECORD (sha256, urlsafe base64 without padding, size)
last of all, ZIP_DEFLATED, the file's mode in the external attributes, and
the timestamp SOURCE_DATE_EPOCH gives (fixed here, so the wheel is the same
bytes every time).

usage: pack_wheel.py TREE OUTDIR [--name pkg] [--version 1.0]
                     [--tag py3-none-linux_x86_64] [--purelib]
                     [--stored GLOB]... [--data SCHEME/PATH=FILE]...
  --stored GLOB   entries matching GLOB (fnmatch on the archive name) are
                  ZIP_STORED instead of deflated
  --data ...      FILE goes to <name>-<version>.data/SCHEME/PATH
Prints the wheel's path.
"""
import argparse
import base64
import csv
import fnmatch
import hashlib
import io
import os
import stat
import zipfile

DATE_TIME = (1980, 1, 1, 0, 0, 0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tree")
    p.add_argument("outdir")
    p.add_argument("--name", default="pkg")
    p.add_argument("--version", default="1.0")
    p.add_argument("--tag", default="py3-none-linux_x86_64")
    p.add_argument("--purelib", action="store_true")
    p.add_argument("--stored", action="append", default=[])
    p.add_argument("--data", action="append", default=[])
    a = p.parse_args()

    dist_info = "%s-%s.dist-info" % (a.name, a.version)
    data_dir = "%s-%s.data" % (a.name, a.version)
    metadata = (
        "Metadata-Version: 2.1\n"
        "Name: %s\n"
        "Version: %s\n"
        "Summary: kpack wheel test package\n"
        "Requires-Python: >=3.8\n"
        "Provides-Extra: test\n"
        "Requires-Dist: pytest ; extra == \"test\"\n"
        "\n"
        "A package with a HIP extension, for the kpack wheel tests.\n"
    ) % (a.name, a.version)
    wheel = (
        "Wheel-Version: 1.0\n"
        "Generator: pack_wheel.py (kpack tests)\n"
        "Root-Is-Purelib: %s\n"
        "Tag: %s\n"
    ) % ("true" if a.purelib else "false", a.tag)

    # (archive name, bytes, mode) in wheel's order.
    files = []
    for root, dirnames, filenames in os.walk(a.tree):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(root, name)
            if not os.path.isfile(path):
                continue
            arcname = os.path.relpath(path, a.tree).replace(os.sep, "/")
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                files.append((arcname, f.read(),
                              stat.S_IMODE(st.st_mode) | stat.S_IFMT(st.st_mode)))
    for spec in a.data:
        dest, src = spec.split("=", 1)
        with open(src, "rb") as f:
            st = os.fstat(f.fileno())
            files.append((data_dir + "/" + dest, f.read(),
                          stat.S_IMODE(st.st_mode) | stat.S_IFMT(st.st_mode)))
    files.append((dist_info + "/METADATA", metadata.encode(), 0o100644))
    files.append((dist_info + "/WHEEL", wheel.encode(), 0o100644))
    files.append((dist_info + "/top_level.txt",
                  (sorted(os.listdir(a.tree))[0] + "\n").encode(), 0o100644))

    wheel_name = "%s-%s-%s.whl" % (a.name, a.version, a.tag)
    out = os.path.join(a.outdir, wheel_name)
    os.makedirs(a.outdir, exist_ok=True)
    record = io.StringIO()
    writer = csv.writer(record, delimiter=",", quotechar='"', lineterminator="\n")
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for arcname, data, mode in files:
            info = zipfile.ZipInfo(arcname, date_time=DATE_TIME)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            if any(fnmatch.fnmatch(arcname, g) for g in a.stored):
                info.compress_type = zipfile.ZIP_STORED
            z.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
            writer.writerow((arcname, "sha256=" + digest.rstrip(b"=").decode(),
                             len(data)))
        writer.writerow((dist_info + "/RECORD", "", ""))
        info = zipfile.ZipInfo(dist_info + "/RECORD", date_time=DATE_TIME)
        info.external_attr = 0o664 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, record.getvalue())
    print(out)


if __name__ == "__main__":
    main()
