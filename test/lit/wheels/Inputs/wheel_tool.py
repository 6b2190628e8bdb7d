#!/usr/bin/env python3
"""Small wheel operations for the tests, with Python's zipfile:

  ls WHEEL                   one line per entry: method (stored/deflate),
                             mode (octal), size, name
  cat WHEEL NAME             the entry's contents on stdout
  extract WHEEL NAME OUT     the entry's contents into OUT
  flip WHEEL NAME OUT        a copy whose entry NAME has one data byte
                             changed (its CRC no longer matches)
  same WHEEL OTHER NAME...   NAME is the same entry in both wheels: same
                             method, CRC, compressed size and contents
  replace WHEEL NAME FILE OUT
                             a copy with NAME's contents replaced by FILE's,
                             RECORD left as it was (a hash mismatch)
  chmod WHEEL NAME MODE OUT  a copy whose entry NAME has the Unix mode MODE
                             (octal, file type included: 104777) in its
                             external attributes
  unhash WHEEL NAME OUT      a copy whose RECORD row of NAME has no hash
  declare-size WHEEL NAME SIZE OUT
                             a copy whose entry NAME declares SIZE bytes
                             uncompressed in its local header and the central
                             directory (zip64), its data unchanged: a lie, as
                             a zip bomb's huge size is none
The functions below also build the zip fuzzers' hostile seeds
(test/fuzz/artifacts/make_seeds.py).
"""
import base64
import csv
import hashlib
import io
import shutil
import struct
import sys
import zipfile


def copy_zip(data, change):
    """The zip in the bytes DATA rewritten entry by entry with zipfile:
    change(info, contents) returns the (info, contents) to write."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for i in zin.infolist():
            zout.writestr(*change(i, zin.read(i.filename)))
    return out.getvalue()


def with_mode(data, name, mode):
    """DATA with entry NAME's Unix mode (external attributes) set to MODE."""
    def change(i, contents):
        if i.filename == name:
            i.external_attr = (mode << 16) | (i.external_attr & 0xFFFF)
            i.create_system = 3
        return i, contents
    return copy_zip(data, change)


def record_digest(contents):
    """RECORD's hash of CONTENTS (sha256, urlsafe base64 without padding)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(contents).digest())
    return "sha256=" + digest.rstrip(b"=").decode()


def without_hash(data, name):
    """DATA with NAME's RECORD row left without hash."""
    def change(i, contents):
        if i.filename.endswith(".dist-info/RECORD"):
            rows = list(csv.reader(io.StringIO(contents.decode(), newline="")))
            record = io.StringIO()
            writer = csv.writer(record, lineterminator="\n")
            for row in rows:
                writer.writerow([row[0], "", row[2]] if row[0] == name else row)
            contents = record.getvalue().encode()
        return i, contents
    return copy_zip(data, change)


def declaring_size(data, name, size):
    """DATA with entry NAME declaring SIZE bytes uncompressed, in its local
    header's zip64 extra field and in the central directory."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for i in zin.infolist():
            contents = zin.read(i.filename)
            if i.filename != name:
                zout.writestr(i, contents)
                continue
            info = zipfile.ZipInfo(i.filename, date_time=i.date_time)
            info.compress_type = i.compress_type
            info.external_attr = i.external_attr
            with zout.open(info, "w", force_zip64=True) as f:
                f.write(contents)
            target = info
        # The central directory, written at close, has the lie.
        target.file_size = size
    data = bytearray(out.getvalue())
    # The local header as every zipfile version agrees with the central
    # directory: its version needed (at 4) the central entry's, both sizes
    # (at 18 and 22) 0xffffffff, that is in its zip64 extra field after the
    # 30 fixed bytes and the name (id 1, length 16, uncompressed size,
    # compressed size).
    name = target.filename.encode()
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        at = z.start_dir
    while data[at + 46:at + 46 + len(name)] != name or \
            struct.unpack_from("<H", data, at + 28)[0] != len(name):
        n, m, k = struct.unpack_from("<HHH", data, at + 28)
        at += 46 + n + m + k
    version = struct.unpack_from("<H", data, at + 6)[0]
    local = target.header_offset
    struct.pack_into("<H", data, local + 4, version)
    struct.pack_into("<II", data, local + 18, 0xFFFFFFFF, 0xFFFFFFFF)
    at = local + 30 + len(name)
    assert struct.unpack_from("<HH", data, at) == (1, 16)
    struct.pack_into("<QQ", data, at + 4, size, target.compress_size)
    return bytes(data)

METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}


def main():
    cmd, wheel = sys.argv[1], sys.argv[2]
    if cmd == "ls":
        with zipfile.ZipFile(wheel) as z:
            for i in z.infolist():
                print("%s %o %d %s" % (METHODS.get(i.compress_type, i.compress_type),
                                       i.external_attr >> 16, i.file_size, i.filename))
    elif cmd == "cat":
        with zipfile.ZipFile(wheel) as z:
            sys.stdout.buffer.write(z.read(sys.argv[3]))
    elif cmd == "extract":
        with zipfile.ZipFile(wheel) as z, open(sys.argv[4], "wb") as out:
            out.write(z.read(sys.argv[3]))
    elif cmd == "flip":
        name, out = sys.argv[3], sys.argv[4]
        shutil.copyfile(wheel, out)
        with zipfile.ZipFile(wheel) as z:
            info = z.getinfo(name)
        with open(out, "r+b") as f:
            f.seek(info.header_offset + 26)
            n, m = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
            at = info.header_offset + 30 + n + m + info.compress_size // 2
            f.seek(at)
            b = f.read(1)
            f.seek(at)
            f.write(bytes([b[0] ^ 0xFF]))
    elif cmd == "same":
        with zipfile.ZipFile(wheel) as a, zipfile.ZipFile(sys.argv[3]) as b:
            for name in sys.argv[4:]:
                x, y = a.getinfo(name), b.getinfo(name)
                if (x.compress_type, x.CRC, x.compress_size, x.external_attr) != \
                        (y.compress_type, y.CRC, y.compress_size, y.external_attr) or \
                        a.read(name) != b.read(name):
                    sys.exit("%s differs" % name)
                print("same " + name)
    elif cmd == "replace":
        name, src, out = sys.argv[3], sys.argv[4], sys.argv[5]
        with open(src, "rb") as f:
            data = f.read()
        with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(out, "w") as zout:
            for i in zin.infolist():
                zout.writestr(i, data if i.filename == name else zin.read(i.filename))
    elif cmd in ("chmod", "unhash", "declare-size"):
        with open(wheel, "rb") as f:
            data = f.read()
        name, out = sys.argv[3], sys.argv[-1]
        if cmd == "chmod":
            data = with_mode(data, name, int(sys.argv[4], 8))
        elif cmd == "unhash":
            data = without_hash(data, name)
        else:
            data = declaring_size(data, name, int(sys.argv[4]))
        with open(out, "wb") as f:
            f.write(data)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
