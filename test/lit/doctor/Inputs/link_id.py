#!/usr/bin/env python3
"""Edits the link identity (docs/format-extensions.md, "Link identity") and
the TOC of test inputs in place, independently of the project's code (a
small msgpack reader and writer of its own: the tests have no msgpack
module).

usage: link_id.py binary FILE ID
         sets "link_id" in the kpack metadata at the start of an ELF
         binary's .rocm_kpack_ref section (it must still fit)
       link_id.py entries ARCHIVE KEY ID
         sets "link_id" in the metadata map of every entry of KEY
       link_id.py drop ARCHIVE KEY
         removes KEY (all its targets) from the TOC
"""
import struct
import sys


class Reader:
    def __init__(self, data, pos=0):
        self.data, self.pos = data, pos

    def take(self, n):
        b = self.data[self.pos:self.pos + n]
        if len(b) != n:
            raise ValueError("truncated msgpack")
        self.pos += n
        return b

    def uint(self, n):
        return int.from_bytes(self.take(n), "big")

    def value(self):
        t = self.take(1)[0]
        if t <= 0x7F:
            return t
        if 0x80 <= t <= 0x8F:
            return self.map(t & 0x0F)
        if 0x90 <= t <= 0x9F:
            return [self.value() for _ in range(t & 0x0F)]
        if 0xA0 <= t <= 0xBF:
            return self.take(t & 0x1F).decode()
        if t in (0xCC, 0xCD, 0xCE, 0xCF):
            return self.uint(1 << (t - 0xCC))
        if t in (0xD9, 0xDA, 0xDB):
            return self.take(self.uint(1 << (t - 0xD9))).decode()
        if t in (0xDC, 0xDD):
            return [self.value() for _ in range(self.uint(2 << (t - 0xDC)))]
        if t in (0xDE, 0xDF):
            return self.map(self.uint(2 << (t - 0xDE)))
        raise ValueError("unsupported msgpack type 0x%02x" % t)

    def map(self, n):
        return {self.value(): self.value() for _ in range(n)}


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
