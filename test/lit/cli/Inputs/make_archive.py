#!/usr/bin/env python3
"""Writes a "none" .kpack archive (FORMAT.md §1) by hand, with per-entry TOC
metadata, independently of the project's writer (the tests have no Python
msgpack module: the few msgpack types needed are encoded here).

usage: make_archive.py OUT GROUP FAMILY (KEY ARCH FILE META)...
META is "-" or "name=value;name=value" (the entry's "metadata" map).
"""
import struct
import sys


def pack(v):
    if isinstance(v, bool):
        raise TypeError(v)
    if isinstance(v, int):
        return bytes([v]) if v < 128 else b"\xcf" + struct.pack(">Q", v)
    if isinstance(v, str):
        b = v.encode()
        if len(b) < 32:
            return bytes([0xA0 | len(b)]) + b
        return b"\xda" + struct.pack(">H", len(b)) + b
    if isinstance(v, list):
        head = bytes([0x90 | len(v)]) if len(v) < 16 else b"\xdc" + struct.pack(">H", len(v))
        return head + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        head = bytes([0x80 | len(v)]) if len(v) < 16 else b"\xde" + struct.pack(">H", len(v))
        return head + b"".join(pack(k) + pack(x) for k, x in v.items())
    raise TypeError(v)


def main():
    out, group, family = sys.argv[1:4]
    specs = sys.argv[4:]
    if len(specs) % 4:
        sys.exit("entries come in fours: KEY ARCH FILE META")
    blobs, toc, arches, data = [], {}, set(), b""
    for i in range(0, len(specs), 4):
        key, arch, path, meta = specs[i:i + 4]
        payload = open(path, "rb").read()
        entry = {"type": "hsaco", "ordinal": len(blobs), "original_size": len(payload)}
        if meta != "-":
            entry["metadata"] = dict(kv.split("=", 1) for kv in meta.split(";"))
        blobs.append({"offset": 64 + len(data), "size": len(payload)})
        data += payload
        toc.setdefault(key, {})[arch] = entry
        arches.add(arch)
    tocmap = {"format_version": 1, "group_name": group, "gfx_arch_family": family,
              "gfx_arches": sorted(arches), "toc": toc,
              "compression_scheme": "none", "blobs": blobs}
    header = b"KPAK" + struct.pack("<IQ", 1, 64 + len(data)) + b"\0" * 48
    with open(out, "wb") as f:
        f.write(header + data + pack(tocmap))


main()
