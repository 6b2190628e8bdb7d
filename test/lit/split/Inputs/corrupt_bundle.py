#!/usr/bin/env python3
"""Overwrites the magic of the first offload bundle in FILE's .hip_fatbin
(in place): the file stays an ELF file whose device code cannot be read.

usage: corrupt_bundle.py FILE
"""
import struct
import sys

path = sys.argv[1]
with open(path, "rb") as f:
    data = bytearray(f.read())
(shoff,) = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
strtab_off = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
for i in range(shnum):
    h = shoff + i * shentsize
    (name,) = struct.unpack_from("<I", data, h)
    end = data.index(b"\0", strtab_off + name)
    if data[strtab_off + name:end] == b".hip_fatbin":
        (offset,) = struct.unpack_from("<Q", data, h + 0x18)
        data[offset:offset + 4] = b"XXXX"
        break
else:
    sys.exit("corrupt_bundle.py: %s has no .hip_fatbin" % path)
with open(path, "wb") as f:
    f.write(data)
