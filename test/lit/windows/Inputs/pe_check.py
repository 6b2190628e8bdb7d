#!/usr/bin/env python3
"""An independent PE32+ reader for the Windows tests (standard library only,
no project code): checks what the Windows loader and the kpack format ask of
an image and prints a summary for FileCheck.

usage: pe_check.py IMAGE

Checks: DOS and PE headers, x86-64 PE32+; the section table inside the
headers; sections in ascending, contiguous address order, each aligned to
SectionAlignment; SizeOfImage exactly covering them; raw data aligned to
FileAlignment, inside the file, not overlapping the headers or each other;
the checksum 0 or correct; base relocation blocks inside their directory,
DIR64 targets inside the image, and no DIR64 pointer into .hip_fat; every
wrapper in .hipFatB covered by a DIR64 base relocation (if the image has
any), HIPF pointing into .hip_fat or HIPK pointing at .kpackrf, whose
msgpack map is decoded. Prints one line per fact, then "OK"; the first
failed check prints "FAIL: ..." and exits 1.
"""
import struct
import sys

HIPF = 0x48495046
HIPK = 0x4B504948


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def align(v, a):
    return (v + a - 1) // a * a


def extent(s):
    """A section's size in memory: VirtualSize, or SizeOfRawData if 0."""
    return s["vs"] or s["rs"]


def checksum(data, at):
    total = 0
    buf = bytearray(data)
    buf[at:at + 4] = b"\0\0\0\0"
    if len(buf) % 2:
        buf.append(0)
    for (w,) in struct.iter_unpack("<H", bytes(buf)):
        total += w
        total = (total & 0xFFFF) + (total >> 16)
    total = (total & 0xFFFF) + (total >> 16)
    return (total + len(data)) & 0xFFFFFFFF


def msgpack(buf, pos):
    """Decodes the msgpack subset the kpack metadata uses."""
    b = buf[pos]
    if b & 0xF0 == 0x80 or b == 0xDE:
        n, pos = (b & 0x0F, pos + 1) if b != 0xDE else (struct.unpack_from(">H", buf, pos + 1)[0], pos + 3)
        out = {}
        for _ in range(n):
            k, pos = msgpack(buf, pos)
            v, pos = msgpack(buf, pos)
            out[k] = v
        return out, pos
    if b & 0xF0 == 0x90 or b == 0xDC:
        n, pos = (b & 0x0F, pos + 1) if b != 0xDC else (struct.unpack_from(">H", buf, pos + 1)[0], pos + 3)
        out = []
        for _ in range(n):
            v, pos = msgpack(buf, pos)
            out.append(v)
        return out, pos
    if b & 0xE0 == 0xA0:
        n, pos = b & 0x1F, pos + 1
    elif b == 0xD9:
        n, pos = buf[pos + 1], pos + 2
    elif b == 0xDA:
        n, pos = struct.unpack_from(">H", buf, pos + 1)[0], pos + 3
    else:
        fail("unexpected msgpack byte 0x%02x" % b)
    return bytes(buf[pos:pos + n]).decode(), pos + n


def main():
    data = open(sys.argv[1], "rb").read()
    if len(data) < 0x40 or data[:2] != b"MZ":
        fail("no MZ header")
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        fail("no PE signature")
    machine, nsec, _, symptr, nsym, optsize, chars = struct.unpack_from("<HHIIIHH", data, pe + 4)
    if machine != 0x8664:
        fail("machine 0x%x" % machine)
    opt = pe + 24
    if struct.unpack_from("<H", data, opt)[0] != 0x20B:
        fail("not PE32+")
    init_data = struct.unpack_from("<I", data, opt + 8)[0]
    image_base = struct.unpack_from("<Q", data, opt + 24)[0]
    salign, falign = struct.unpack_from("<II", data, opt + 32)
    size_of_image, size_of_headers, csum = struct.unpack_from("<III", data, opt + 56)
    ndirs = struct.unpack_from("<I", data, opt + 108)[0]
    dirs = [struct.unpack_from("<II", data, opt + 112 + 8 * i) for i in range(ndirs)]
    table = opt + optsize
    print("kind: %s" % ("dll" if chars & 0x2000 else "exe"))
    if table + 40 * nsec > size_of_headers or size_of_headers > len(data):
        fail("section table outside the headers")
    if size_of_headers % falign:
        fail("SizeOfHeaders not a multiple of FileAlignment")
    secs = []
    for i in range(nsec):
        raw = struct.unpack_from("<8sIIIIIIHHI", data, table + 40 * i)
        name = raw[0].rstrip(b"\0").decode("latin-1")
        if name.startswith("/") and symptr:
            strtab = symptr + 18 * nsym
            off = strtab + int(name[1:])
            name = data[off:data.index(b"\0", off)].decode("latin-1")
        secs.append({"name": name, "vs": raw[1], "va": raw[2], "rs": raw[3], "ptr": raw[4], "chars": raw[9]})

    # Addresses.
    expect = align(size_of_headers, salign)
    for s in secs:
        if s["va"] != expect:
            fail("section %s at 0x%x, expected 0x%x (sections must be contiguous)" % (s["name"], s["va"], expect))
        expect = align(s["va"] + extent(s), salign)
    if size_of_image != expect:
        fail("SizeOfImage 0x%x, expected 0x%x" % (size_of_image, expect))
    print("SizeOfImage: ok")

    # File layout.
    ranges = []
    for s in secs:
        if not s["rs"]:
            continue
        if s["ptr"] % falign or s["rs"] % falign:
            fail("raw data of %s not aligned to FileAlignment" % s["name"])
        if s["ptr"] < size_of_headers or s["ptr"] + s["rs"] > len(data):
            fail("raw data of %s outside the file or over the headers" % s["name"])
        ranges.append((s["ptr"], s["ptr"] + s["rs"], s["name"]))
    ranges.sort()
    for a, b in zip(ranges, ranges[1:]):
        if b[0] < a[1]:
            fail("raw data of %s and %s overlap" % (a[2], b[2]))
    print("raw data: ok")
    if csum and csum != checksum(data, opt + 64):
        fail("wrong checksum")
    print("checksum: %s" % ("ok" if csum else "zero"))

    def section(name):
        found = [s for s in secs if s["name"] == name]
        return found[0] if found else None

    def offset_of(rva, size):
        for s in secs:
            if s["va"] <= rva and rva + size <= s["va"] + min(extent(s), s["rs"]):
                return s["ptr"] + rva - s["va"]
        return None

    # Base relocations.
    dir64 = set()
    if ndirs > 5 and dirs[5][1]:
        rva, size = dirs[5]
        pos = offset_of(rva, size)
        if pos is None:
            fail("base relocation directory not in a section's file data")
        end = pos + size
        while pos < end:
            page, bsize = struct.unpack_from("<II", data, pos)
            if bsize < 8 or pos + bsize > end:
                fail("base relocation block out of range")
            for (e,) in struct.iter_unpack("<H", data[pos + 8:pos + bsize]):
                if e >> 12 == 10:
                    dir64.add(page + (e & 0xFFF))
                elif e >> 12 != 0:
                    fail("base relocation type %d" % (e >> 12))
            pos += bsize
    fat = section(".hip_fat")
    wrappers = section(".hipFatB")
    ref = section(".kpackrf")
    slots = set()
    if wrappers:
        slots = {wrappers["va"] + 24 * i + 8 for i in range(wrappers["vs"] // 24)}
    into_fat = 0
    for rva in sorted(dir64):
        if rva + 8 > size_of_image:
            fail("DIR64 at 0x%x outside the image" % rva)
        off = offset_of(rva, 8)
        if off is None:
            continue
        value = struct.unpack_from("<Q", data, off)[0]
        if fat and image_base + fat["va"] <= value < image_base + fat["va"] + extent(fat):
            # A fat image's wrappers point there; nothing else may, and
            # nothing at all once converted.
            if ref or rva not in slots:
                fail("DIR64 at RVA 0x%x points into .hip_fat" % rva)
            into_fat += 1
    print("base relocations: %d DIR64, %d into .hip_fat" % (len(dir64), into_fat))
    if fat:
        print(".hip_fat: virtual size 0x%x, raw size 0x%x" % (fat["vs"], fat["rs"]))
    print("SizeOfInitializedData: 0x%x" % init_data)

    # Wrappers.
    if ref:
        if ref["chars"] != 0x40000040:
            fail(".kpackrf characteristics 0x%x" % ref["chars"])
        meta, _ = msgpack(data, ref["ptr"])
        print(".kpackrf: kernel_name %s, paths %s" % (meta["kernel_name"], ",".join(meta["kpack_search_paths"])))
    if wrappers:
        for i in range(wrappers["vs"] // 24):
            off = wrappers["ptr"] + 24 * i
            magic, version, ptr, res = struct.unpack_from("<IIQQ", data, off)
            rva = wrappers["va"] + 24 * i + 8
            if dir64 and rva not in dir64:
                fail("wrapper %d has no DIR64 base relocation" % i)
            target = ptr - image_base
            if magic == HIPK:
                if not ref or target != ref["va"]:
                    fail("HIPK wrapper %d does not point at .kpackrf" % i)
                print("wrapper %d: HIPK index %d -> .kpackrf" % (i, res))
            elif magic == HIPF:
                if not fat or not fat["va"] <= target < fat["va"] + extent(fat):
                    fail("HIPF wrapper %d does not point into .hip_fat" % i)
                print("wrapper %d: HIPF -> .hip_fat+0x%x" % (i, target - fat["va"]))
            else:
                fail("wrapper %d magic 0x%x" % (i, magic))
    print("OK")


main()
