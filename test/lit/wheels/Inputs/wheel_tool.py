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
"""
import shutil
import sys
import zipfile

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
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
