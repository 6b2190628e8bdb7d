#!/usr/bin/env python3
"""Seed corpus of the zip fuzzer: small zips as Python's zipfile (and so
`wheel` and pip) writes them: stored and deflated entries, a directory entry,
a UTF-8 name, a comment, zip64 end records, and a small wheel.

usage: make_seeds.py OUTDIR
"""
import io
import os
import sys
import zipfile


def write(path, entries, zip64=False, comment=b""):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data, method in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            info.external_attr = 0o100644 << 16
            with z.open(info, "w", force_zip64=zip64) as f:
                f.write(data)
        z.comment = comment
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    S, D = zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED
    text = b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\nbody\n"
    write(os.path.join(out, "stored.zip"), [("a.txt", b"alpha", S)])
    write(os.path.join(out, "deflated.zip"),
          [("pkg/", b"", S), ("pkg/b.txt", b"z" * 300, D), ("pkg/\u00e9", b"", D)],
          comment=b"comment")
    write(os.path.join(out, "zip64.zip"), [("a", b"abc" * 20, D), ("b", b"", S)],
          zip64=True)
    record = (b"pkg/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
              b"\"pkg/a,b\",,\npkg-1.0.dist-info/RECORD,,\n")
    write(os.path.join(out, "wheel.zip"),
          [("pkg/__init__.py", b"", D),
           ("pkg-1.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nTag: py3-none-any\n", D),
           ("pkg-1.0.dist-info/METADATA", text, D),
           ("pkg-1.0.dist-info/RECORD", record, D)])


if __name__ == "__main__":
    main()
