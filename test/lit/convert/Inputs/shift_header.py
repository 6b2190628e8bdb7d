#!/usr/bin/env python3
"""Adds DELTA to the file offset of one header of an ELF64 file, in place:
the program header of type TYPE (e.g. 2 for PT_DYNAMIC) or the section
named NAME; or (shdr-addr) gives section NAME the address of section OTHER
plus DELTA (default 0).

usage: shift_header.py FILE phdr TYPE DELTA | FILE shdr NAME DELTA
       | FILE shdr-addr NAME OTHER [DELTA]
"""
import struct
import sys

path, kind, which, arg = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
d = bytearray(open(path, "rb").read())
if kind == "phdr":
    phoff, = struct.unpack_from("<Q", d, 0x20)
    phnum, = struct.unpack_from("<H", d, 0x38)
    entries = [phoff + 56 * i for i in range(phnum)]
    at = next(e for e in entries if struct.unpack_from("<I", d, e)[0] == int(which))
    field = at + 8  # p_offset
else:
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", d, 0x3c)
    entries = [shoff + 64 * i for i in range(shnum)]
    strtab = struct.unpack_from("<Q", d, entries[shstrndx] + 24)[0]
    def name(e):
        start = strtab + struct.unpack_from("<I", d, e)[0]
        return d[start:d.index(b"\0", start)].decode()
    at = next(e for e in entries if name(e) == which)
    field = at + 24  # sh_offset
    if kind == "shdr-addr":
        other = next(e for e in entries if name(e) == arg)
        extra = int(sys.argv[5]) if len(sys.argv) > 5 else 0
        struct.pack_into("<Q", d, at + 16,
                         struct.unpack_from("<Q", d, other + 16)[0] + extra)
        open(path, "wb").write(d)
        sys.exit(0)
value, = struct.unpack_from("<Q", d, field)
struct.pack_into("<Q", d, field, value + int(arg))
open(path, "wb").write(d)
