#!/usr/bin/env python3
"""Edits FILE's .hip_fatbin in place.

usage: edit_fatbin.py FILE magic   overwrite the first offload bundle's magic:
                                   an ELF file whose device code cannot be read
       edit_fatbin.py FILE empty   set the section's size to 0, as in the
                                   stripped binaries TheRock's split wrapper
                                   skips (split_artifacts_wrapper.py)
"""
import struct
import sys

path, what = sys.argv[1], sys.argv[2]
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
        if what == "magic":
            (offset,) = struct.unpack_from("<Q", data, h + 0x18)
            data[offset:offset + 4] = b"XXXX"
        elif what == "empty":
            struct.pack_into("<Q", data, h + 0x20, 0)
        else:
            sys.exit("edit_fatbin.py: unknown edit '%s'" % what)
        break
else:
    sys.exit("edit_fatbin.py: %s has no .hip_fatbin" % path)
with open(path, "wb") as f:
    f.write(data)
