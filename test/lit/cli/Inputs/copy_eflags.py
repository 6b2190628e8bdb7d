#!/usr/bin/env python3
"""Gives the N-th ELF file stored in an uncompressed archive the e_flags of
another code object, in place: the way to make an archive whose entry does
not match its arch key now that every writer of the project refuses one.

usage: copy_eflags.py ARCHIVE N CODE_OBJECT
"""
import sys

E_FLAGS = 0x30  # Elf64_Ehdr.e_flags

archive, index, source = sys.argv[1], int(sys.argv[2]), sys.argv[3]
flags = open(source, "rb").read()[E_FLAGS:E_FLAGS + 4]
data = bytearray(open(archive, "rb").read())
pos = -1
for _ in range(index + 1):
    pos = data.index(b"\x7fELF", pos + 1)
data[pos + E_FLAGS:pos + E_FLAGS + 4] = flags
open(archive, "wb").write(data)
