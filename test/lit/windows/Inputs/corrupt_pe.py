#!/usr/bin/env python3
"""Writes a malformed copy of a PE image for the converter's bad-input test
(standard library only). usage: corrupt_pe.py IN OUT KIND
  truncated-headers  the file ends inside the optional header
  table-past-end     NumberOfSections so large the table runs past the end
  overlap            the second section's raw data starts inside the first's
  raw-past-end       the last section's raw data runs past the end
  reloc-block        a base relocation block's size runs past its directory
  reloc-block-small  a base relocation block of size 4 (smaller than its header)
  no-room            the bytes after the section table are in use (no room
                     for another section header)
  bad-align          FileAlignment 3
"""
import struct
import sys

src, dst, kind = sys.argv[1:4]
d = bytearray(open(src, "rb").read())
pe = struct.unpack_from("<I", d, 0x3C)[0]
nsec = struct.unpack_from("<H", d, pe + 6)[0]
optsize = struct.unpack_from("<H", d, pe + 20)[0]
opt = pe + 24
table = opt + optsize


def sec(i):
    return table + 40 * i


def raw(i):
    return struct.unpack_from("<II", d, sec(i) + 16)  # SizeOfRawData, PointerToRawData


if kind == "truncated-headers":
    d = d[:opt + 40]
elif kind == "table-past-end":
    struct.pack_into("<H", d, pe + 6, 0xFFF0)
elif kind == "overlap":
    size0, ptr0 = raw(0)
    struct.pack_into("<I", d, sec(1) + 20, ptr0 + 0x200)
elif kind == "raw-past-end":
    last = max(range(nsec), key=lambda i: raw(i)[1])
    struct.pack_into("<I", d, sec(last) + 16, len(d))
elif kind in ("reloc-block", "reloc-block-small"):
    rva, size = struct.unpack_from("<II", d, opt + 112 + 8 * 5)
    for i in range(nsec):
        vs, va, rs, ptr = struct.unpack_from("<IIII", d, sec(i) + 8)
        if va <= rva < va + vs:
            at = ptr + rva - va
            break
    struct.pack_into("<I", d, at + 4, size + 0x1000 if kind == "reloc-block" else 4)
elif kind == "no-room":
    d[table + 40 * nsec:table + 40 * nsec + 8] = b"INUSE!!!"
elif kind == "bad-align":
    struct.pack_into("<I", d, opt + 36, 3)
else:
    sys.exit("corrupt_pe.py: unknown kind " + kind)
open(dst, "wb").write(d)
