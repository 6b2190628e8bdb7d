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
  no-wrapper-reloc   the DIR64 base relocations at the .hipFatB wrappers'
                     pointers become IMAGE_REL_BASED_ABSOLUTE (no fix-up):
                     a loader that relocates the image leaves them pointing
                     at the preferred base
  gap                the last section moves up by SectionAlignment (and
                     SizeOfImage with it): a gap in memory before it
  hip-fat-vsize0     not malformed: .hip_fat's VirtualSize becomes 0, so
                     that its extent is its SizeOfRawData (as the Windows
                     loader reads it)
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
elif kind == "no-wrapper-reloc":
    def at_rva(rva):
        for i in range(nsec):
            vs, va, rs, ptr = struct.unpack_from("<IIII", d, sec(i) + 8)
            if va <= rva < va + max(vs, rs):
                return ptr + rva - va
        sys.exit("corrupt_pe.py: RVA 0x%x is in no section" % rva)
    pointers = set()
    for i in range(nsec):
        if bytes(d[sec(i):sec(i) + 8]).rstrip(b"\0") == b".hipFatB":
            vs, va = struct.unpack_from("<II", d, sec(i) + 8)
            pointers |= {va + 8 + 24 * k for k in range(vs // 24)}
    rva, size = struct.unpack_from("<II", d, opt + 112 + 8 * 5)
    at, end, cleared = at_rva(rva), at_rva(rva) + size, 0
    while at < end:
        page, block = struct.unpack_from("<II", d, at)
        for e in range(at + 8, at + block, 2):
            v = struct.unpack_from("<H", d, e)[0]
            if v >> 12 == 10 and page + (v & 0xFFF) in pointers:
                struct.pack_into("<H", d, e, 0)
                cleared += 1
        at += block
    if cleared != len(pointers):
        sys.exit("corrupt_pe.py: %d wrappers, %d relocations cleared" % (len(pointers), cleared))
elif kind == "gap":
    salign = struct.unpack_from("<I", d, opt + 32)[0]
    last = max(range(nsec), key=lambda i: struct.unpack_from("<I", d, sec(i) + 12)[0])
    va = struct.unpack_from("<I", d, sec(last) + 12)[0]
    struct.pack_into("<I", d, sec(last) + 12, va + salign)
    size_of_image = struct.unpack_from("<I", d, opt + 56)[0]
    struct.pack_into("<I", d, opt + 56, size_of_image + salign)
elif kind == "hip-fat-vsize0":
    for i in range(nsec):
        if bytes(d[sec(i):sec(i) + 8]).rstrip(b"\0") == b".hip_fat":
            struct.pack_into("<I", d, sec(i) + 8, 0)
            break
    else:
        sys.exit("corrupt_pe.py: no .hip_fat section")
else:
    sys.exit("corrupt_pe.py: unknown kind " + kind)
open(dst, "wb").write(d)
