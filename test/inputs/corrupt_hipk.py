#!/usr/bin/env python3
"""Corrupts a converted (HIPK) host binary in place, the way the mutation
campaign of issue 8 did, to check that the runtime reports instead of
crashing.

usage: corrupt_hipk.py FILE metadata-byte VALUE
         first byte of .rocm_kpack_ref (the msgpack map header) := VALUE
       corrupt_hipk.py FILE wrapper-addend VALUE
         addend of the R_X86_64_RELATIVE that sets the first wrapper's
         `binary` pointer (.hipFatBinSegment + 8) := VALUE
VALUE is an integer (0x... accepted). Exits 1 with a message if the file has
no such section or relocation.
"""
import struct
import sys

R_X86_64_RELATIVE = 8


def sections(data):
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = []
    for i in range(shnum):
        off = shoff + i * shentsize
        name, stype, flags, addr, offset, size = struct.unpack_from(
            "<IIQQQQ", data, off)
        headers.append((name, stype, addr, offset, size))
    strtab = headers[shstrndx]
    result = {}
    for name, stype, addr, offset, size in headers:
        start = strtab[3] + name
        end = data.index(b"\0", start)
        result[data[start:end].decode()] = (addr, offset, size)
    return result


def main():
    path, what, value = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    secs = sections(data)
    if what == "metadata-byte":
        if ".rocm_kpack_ref" not in secs:
            sys.exit("corrupt_hipk: %s has no .rocm_kpack_ref" % path)
        data[secs[".rocm_kpack_ref"][1]] = value
    elif what == "wrapper-addend":
        if ".hipFatBinSegment" not in secs or ".rela.dyn" not in secs:
            sys.exit("corrupt_hipk: %s has no .hipFatBinSegment/.rela.dyn" % path)
        target = secs[".hipFatBinSegment"][0] + 8
        _, offset, size = secs[".rela.dyn"]
        for rel in range(offset, offset + size, 24):
            r_offset, r_info, _ = struct.unpack_from("<QQq", data, rel)
            if r_offset == target and (r_info & 0xFFFFFFFF) == R_X86_64_RELATIVE:
                struct.pack_into("<Q", data, rel + 16, value)
                break
        else:
            sys.exit("corrupt_hipk: no R_X86_64_RELATIVE at 0x%x" % target)
    else:
        sys.exit("corrupt_hipk: unknown corruption '%s'" % what)
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
