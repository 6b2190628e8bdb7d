#!/usr/bin/env python3
"""Prints the per-entry TOC metadata of a .kpack archive (FORMAT.md §1.2),
which `kpack ls` does not show: one line per entry, in TOC order,
"<key> <arch> <name>=<value>...", metadata in the order stored.

usage: toc_metadata.py ARCHIVE
"""
import struct
import sys


class Reader:
    """The msgpack subset a TOC uses (maps, arrays, strings, integers,
    booleans, nil, binary)."""

    def __init__(self, data, pos):
        self.data, self.pos = data, pos

    def take(self, n):
        b = self.data[self.pos:self.pos + n]
        if len(b) != n:
            raise ValueError("truncated TOC")
        self.pos += n
        return b

    def uint(self, n):
        return int.from_bytes(self.take(n), "big")

    def value(self):
        t = self.uint(1)
        if t <= 0x7F:
            return t
        if t >= 0xE0:
            return t - 0x100
        if 0x80 <= t <= 0x8F:
            return self.map(t & 0x0F)
        if 0x90 <= t <= 0x9F:
            return [self.value() for _ in range(t & 0x0F)]
        if 0xA0 <= t <= 0xBF:
            return self.take(t & 0x1F).decode()
        simple = {0xC0: None, 0xC2: False, 0xC3: True}
        if t in simple:
            return simple[t]
        if t in (0xC4, 0xC5, 0xC6):
            return bytes(self.take(self.uint(1 << (t - 0xC4))))
        if t in (0xCC, 0xCD, 0xCE, 0xCF):
            return self.uint(1 << (t - 0xCC))
        if t in (0xD0, 0xD1, 0xD2, 0xD3):
            n = 1 << (t - 0xD0)
            return int.from_bytes(self.take(n), "big", signed=True)
        if t in (0xD9, 0xDA, 0xDB):
            return self.take(self.uint(1 << (t - 0xD9))).decode()
        if t in (0xDC, 0xDD):
            return [self.value() for _ in range(self.uint(2 << (t - 0xDC)))]
        if t in (0xDE, 0xDF):
            return self.map(self.uint(2 << (t - 0xDE)))
        raise ValueError("unsupported msgpack type 0x%02x" % t)

    def map(self, n):
        # A list of pairs keeps the stored order.
        return [(self.value(), self.value()) for _ in range(n)]


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:4] != b"KPAK":
        sys.exit("%s: not a .kpack archive" % sys.argv[1])
    (toc_offset,) = struct.unpack_from("<Q", data, 8)
    toc = dict(Reader(data, toc_offset).value())
    for key, arches in toc["toc"]:
        for arch, entry in arches:
            meta = dict(entry).get("metadata", [])
            print(" ".join([key, arch] + ["%s=%s" % kv for kv in meta]))


if __name__ == "__main__":
    main()
