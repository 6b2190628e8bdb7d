"""Rewrites a CCOB v2 bundle as CCOB v1 (FORMAT.md 2.2), which clang 22 no
longer writes: v1 has no total-size field.

usage: ccob_v1.py IN OUT
"""
import struct
import sys

data = open(sys.argv[1], "rb").read()
magic, version, method, total, size, digest = struct.unpack_from("<4sHHIIQ", data)
if magic != b"CCOB" or version != 2:
    sys.exit("error: not a CCOB v2 bundle")
payload = data[24:total]
open(sys.argv[2], "wb").write(
    struct.pack("<4sHHIQ", b"CCOB", 1, method, size, digest) + payload)
