#!/usr/bin/env python3
"""Seed corpus of the zip and wheel fuzzers: small zips as Python's zipfile
(and so `wheel` and pip) writes them: stored and deflated entries, a
directory entry, a UTF-8 name, a comment, zip64 end records, a small wheel
(pkg-1.0, the name the wheel fuzzer gives its input) and hostile variants of
it, made with the wheel tests' wheel_tool.py: setuid and world-writable
modes, a RECORD row without hash, an entry declaring a huge size (a zip
bomb's) and one inflating to more than it declares.

usage: make_seeds.py OUTDIR
"""
import io
import os
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lit", "wheels", "Inputs"))
import wheel_tool  # noqa: E402


def build(entries, zip64=False, comment=b""):
    """A zip of (name, data, method[, mode]) entries."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data, method, *mode in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            info.external_attr = (mode[0] if mode else 0o100644) << 16
            with z.open(info, "w", force_zip64=zip64) as f:
                f.write(data)
        z.comment = comment
    return buf.getvalue()


def write(path, entries, zip64=False, comment=b""):
    save(path, build(entries, zip64, comment))


def save(path, data):
    with open(path, "wb") as f:
        f.write(data)


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

    # A valid wheel (every row hashed, RECORD.jws unhashed as allowed), and
    # hostile variants.
    files = [("pkg/__init__.py", b"", D, 0o100644),
             ("pkg/tool", b"#!/bin/sh\n" + b"echo x\n" * 40, D, 0o100755),
             ("pkg/lib/big.so", b"\x7fELF" + bytes(3000), D, 0o100755),
             ("pkg/data.bin", bytes(range(256)), S, 0o100644),
             ("pkg-1.0.dist-info/WHEEL",
              b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-any\n", D),
             ("pkg-1.0.dist-info/METADATA", text, D)]
    rows = "".join("%s,%s,%d\n" % (n, wheel_tool.record_digest(d), len(d))
                   for n, d, *_ in files)
    rows += "pkg-1.0.dist-info/RECORD.jws,,\npkg-1.0.dist-info/RECORD,,\n"
    good = build(files + [("pkg-1.0.dist-info/RECORD.jws", b"{}", D),
                          ("pkg-1.0.dist-info/RECORD", rows.encode(), D)])
    save(os.path.join(out, "wheel-valid.whl"), good)
    save(os.path.join(out, "wheel-setuid.whl"),
         wheel_tool.with_mode(wheel_tool.with_mode(good, "pkg/tool", 0o104777),
                              "pkg/data.bin", 0o100777))
    save(os.path.join(out, "wheel-unhashed.whl"),
         wheel_tool.without_hash(good, "pkg/tool"))
    save(os.path.join(out, "wheel-huge-size.whl"),
         wheel_tool.declaring_size(good, "pkg/lib/big.so", 1 << 60))
    save(os.path.join(out, "wheel-inflates-more.whl"),
         wheel_tool.declaring_size(good, "pkg/lib/big.so", 100))


if __name__ == "__main__":
    main()
