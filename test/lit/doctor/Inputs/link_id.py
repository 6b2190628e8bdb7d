#!/usr/bin/env python3
"""Edits the link identity (docs/format-extensions.md, "Link identity") and
the TOC of test inputs in place, independently of the project's code (a
small msgpack reader and writer of its own: the tests have no msgpack
module). The msgpack reader is test/inputs/kpack_toc.py's.

usage: link_id.py binary FILE ID
         sets "link_id" in the kpack metadata at the start of an ELF
         binary's .rocm_kpack_ref section (it must still fit)
       link_id.py entries ARCHIVE KEY ID
         sets "link_id" in the metadata map of every entry of KEY
       link_id.py drop ARCHIVE KEY
         removes KEY (all its targets) from the TOC
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "inputs"))
from kpack_toc import Reader  # noqa: E402


def pack(v):
    if isinstance(v, int):
        if v < 128:
            return bytes([v])
        return b"\xcf" + struct.pack(">Q", v)
    if isinstance(v, str):
        b = v.encode()
        if len(b) < 32:
            return bytes([0xA0 | len(b)]) + b
        if len(b) < 256:
            return b"\xd9" + bytes([len(b)]) + b
        return b"\xda" + struct.pack(">H", len(b)) + b
    if isinstance(v, list):
        head = bytes([0x90 | len(v)]) if len(v) < 16 else b"\xdc" + struct.pack(">H", len(v))
        return head + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        head = bytes([0x80 | len(v)]) if len(v) < 16 else b"\xde" + struct.pack(">H", len(v))
        return head + b"".join(pack(k) + pack(x) for k, x in v.items())
    raise TypeError(v)


def section(data, wanted):
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
             for i in range(shnum)]
    strtab = heads[shstrndx][4]
    for name, _, _, _, offset, size in heads:
        start = strtab + name
        if data[start:data.index(b"\0", start)].decode() == wanted:
            return offset, size
    sys.exit("link_id.py: no %s section" % wanted)


def main():
    what, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if what == "binary":
        offset, size = section(data, ".rocm_kpack_ref")
        r = Reader(data, offset)
        meta = r.value()
        old_len = r.pos - offset
        meta["link_id"] = sys.argv[3]
        new = pack(meta)
        if len(new) > size:
            sys.exit("link_id.py: the metadata no longer fits its section")
        data[offset:offset + max(old_len, len(new))] = new.ljust(max(old_len, len(new)), b"\0")
    else:
        (toc_offset,) = struct.unpack_from("<Q", data, 8)
        toc = Reader(data, toc_offset).value()
        key = sys.argv[3]
        if key not in toc["toc"]:
            sys.exit("link_id.py: no key %s" % key)
        if what == "drop":
            del toc["toc"][key]
        else:
            for entry in toc["toc"][key].values():
                entry.setdefault("metadata", {})["link_id"] = sys.argv[4]
        data = data[:toc_offset] + pack(toc)
    with open(path, "wb") as f:
        f.write(data)


main()
