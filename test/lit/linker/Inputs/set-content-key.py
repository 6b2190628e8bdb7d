"""set-content-key.py IN OUT KEY: copies the kpack-ready ELF object IN to OUT
with the content key of its (single) payload record and key record set to
KEY (hex), as a producer that keys bundles wrongly would write them. Reads
the section headers with the standard library only."""
import struct
import sys

src, dst, key = sys.argv[1], sys.argv[2], int(sys.argv[3], 16)
data = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)


def header(i):
    name, _type, _flags, _addr, off, size = struct.unpack_from(
        "<IIQQQQ", data, shoff + i * shentsize)
    return name, off, size


strtab = header(shstrndx)[1]
found = set()
for i in range(shnum):
    name, off, size = header(i)
    end = data.index(b"\0", strtab + name)
    sname = data[strtab + name:end].decode()
    if sname == ".rocm_kpack_payload":
        assert data[off:off + 4] == b"KPLD", "not one payload record"
    elif sname == ".rocm_kpack_ref":
        assert data[off:off + 4] == b"KREF", "not one key record"
    else:
        continue
    struct.pack_into("<Q", data, off + 8, key)
    found.add(sname)
assert found == {".rocm_kpack_payload", ".rocm_kpack_ref"}, found
open(dst, "wb").write(data)
