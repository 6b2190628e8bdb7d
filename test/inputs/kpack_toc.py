#!/usr/bin/env python3
"""Prints a .kpack archive's TOC as text, entry metadata included (what
`kpack ls` leaves out), one entry per line sorted by key and arch:

    group_name blas_lib
    gfx_arch_family gfx1100
    gfx_arches gfx1100
    compression_scheme zstd-per-kernel
    <key> <arch> ordinal=N [<metadata key>=<value> ...]

With --metadata, only "<key> <arch> [<metadata key>=<value> ...]" per entry,
in the order the TOC stores them (what a writer's ordering tests check).

usage: kpack_toc.py [--metadata] ARCHIVE...  (a small msgpack reader of its
own, independent of the project's: the tests need no module)
"""
import struct
import sys


class Reader:
    def __init__(self, data, pos):
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
        if t in (0xCC, 0xCD, 0xCE, 0xCF):
            return self.uint(1 << (t - 0xCC))
        if t in (0xD0, 0xD1, 0xD2, 0xD3):
            n = 1 << (t - 0xD0)
            return int.from_bytes(self.take(n), "big", signed=True)
        if t in (0xD9, 0xDA, 0xDB):
            return self.take(self.uint(1 << (t - 0xD9))).decode()
        if t in (0xC4, 0xC5, 0xC6):
            return bytes(self.take(self.uint(1 << (t - 0xC4))))
        if t in (0xDC, 0xDD):
            return [self.value() for _ in range(self.uint(2 << (t - 0xDC)))]
        if t in (0xDE, 0xDF):
            return self.map(self.uint(2 << (t - 0xDE)))
        raise ValueError("unsupported msgpack type 0x%02x" % t)

    def map(self, n):
        return {self.value(): self.value() for _ in range(n)}


def dump(path, metadata_only):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"KPAK":
        sys.exit("kpack_toc.py: %s is not a .kpack archive" % path)
    (toc_offset,) = struct.unpack_from("<Q", data, 8)
    toc = Reader(data, toc_offset).value()
    if metadata_only:
        # Dicts keep the stored order.
        for key, arches in toc["toc"].items():
            for arch, e in arches.items():
                meta = e.get("metadata", {})
                print(" ".join([key, arch] + ["%s=%s" % kv for kv in meta.items()]))
        return
    for field in ("group_name", "gfx_arch_family", "compression_scheme"):
        print(field, toc[field])
    print("gfx_arches", " ".join(toc["gfx_arches"]))
    for key in sorted(toc["toc"]):
        for arch in sorted(toc["toc"][key]):
            e = toc["toc"][key][arch]
            meta = e.get("metadata", {})
            print(key, arch, "ordinal=%d" % e["ordinal"],
                  *("%s=%s" % (k, v) for k, v in meta.items()))


if __name__ == "__main__":
    args = sys.argv[1:]
    metadata_only = bool(args) and args[0] == "--metadata"
    for p in args[metadata_only:]:
        dump(p, metadata_only)
