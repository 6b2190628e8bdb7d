#!/usr/bin/env python3
"""Writes an uncompressed offload bundle (FORMAT.md §2.1) with an empty host
entry and one device entry whose ID may be any bytes, which
clang-offload-bundler does not allow (it rewrites invalid target IDs).

usage: make_bundle.py OUT ID PAYLOAD
  ID       the device entry ID; Python escapes allowed ('\\x00', '\\xff');
           @FILE: the bytes of FILE
  PAYLOAD  file holding the device entry's bytes
"""
import struct
import sys

out, entry_id, payload_path = sys.argv[1:4]
if entry_id.startswith("@"):
    device_id = open(entry_id[1:], "rb").read()
else:
    device_id = entry_id.encode("latin-1").decode("unicode_escape").encode(
        "latin-1")
ids = [b"host-x86_64-unknown-linux-gnu", device_id]
payloads = [b"", open(payload_path, "rb").read()]
header = len(b"__CLANG_OFFLOAD_BUNDLE__") + 8 + sum(24 + len(i) for i in ids)
offset = (header + 4095) // 4096 * 4096
data = bytearray(b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(ids)))
offsets = [offset, offset]
for i, p, o in zip(ids, payloads, offsets):
    data += struct.pack("<QQQ", o, len(p), len(i)) + i
data += bytes(offset - len(data)) + payloads[1]
open(out, "wb").write(data)
