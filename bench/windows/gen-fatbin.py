#!/usr/bin/env python3
"""Writes the same real device code into an ELF shared library and a Windows
DLL (issue 17's Windows row of the benchmarks, bench/windows/convert.sh).

usage: gen-fatbin.py FATBIN_SECTION MIB OUTDIR

FATBIN_SECTION is the raw `.hip_fatbin` section of a fat binary (e.g. dumped
from Debian's librocsparse with llvm-objcopy --dump-section). Its bundles
(each starts with the clang offload bundle magic) are taken in order until
they hold at least MIB MiB; each is written to OUTDIR/bundleN.bin, and two
assembly files embed them, page-aligned, exactly as clang lays out a HIP fat
binary:
  elf.s   .hip_fatbin (bundles) + .hipFatBinSegment (HIPF wrappers)
  coff.s  .hip_fat (bundles) + .hipFatB (HIPF wrappers), for x86_64-w64-mingw32
The wrappers point at their bundle (an R_X86_64_RELATIVE relocation in the
.so, an IMAGE_REL_BASED_DIR64 base relocation in the DLL).
"""
import os
import struct
import sys

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def bundle_end(data, start):
    """End of the bundle at START: the furthest entry's end (its header:
    magic, entry count, then offset, size, id length and id per entry)."""
    pos = start + len(MAGIC)
    (count,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    end = pos
    for _ in range(count):
        offset, size, id_len = struct.unpack_from("<QQQ", data, pos)
        pos += 24 + id_len
        end = max(end, pos, start + offset + size)
    return end


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: gen-fatbin.py FATBIN_SECTION MIB OUTDIR")
    section, mib, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(section, "rb") as f:
        data = f.read()
    starts = []
    pos = data.find(MAGIC)
    while pos >= 0:
        starts.append(pos)
        pos = data.find(MAGIC, pos + len(MAGIC))
    if not starts:
        sys.exit(f"gen-fatbin.py: no offload bundle in {section}")
    ends = [bundle_end(data, b) for b in starts]
    os.makedirs(out, exist_ok=True)
    chosen, total = [], 0
    for i, (b, e) in enumerate(zip(starts, ends)):
        if total >= mib << 20:
            break
        name = f"bundle{i}.bin"
        with open(os.path.join(out, name), "wb") as f:
            f.write(data[b:e])
        chosen.append(name)
        total += e - b
    if total < mib << 20:
        sys.exit(f"gen-fatbin.py: {section} holds only {total} bytes of bundles")

    def asm(bundle_section, bundle_flags, wrapper_section, wrapper_flags):
        # Some host code, as every real library has (an image without any
        # executable section is not what clang and lld make of a HIP TU).
        lines = [".text", ".globl kpack_bench_entry", "kpack_bench_entry:", "ret",
                 f".section {bundle_section},{bundle_flags}"]
        for i, name in enumerate(chosen):
            lines += [".p2align 12", f"fatbin{i}:", f'.incbin "{name}"']
        lines += [f".section {wrapper_section},{wrapper_flags}"]
        for i in range(len(chosen)):
            lines += [".p2align 3", ".long 0x48495046", ".long 1",
                      f".quad fatbin{i}", ".quad 0"]
        return "\n".join(lines) + "\n"

    with open(os.path.join(out, "elf.s"), "w") as f:
        f.write(asm(".hip_fatbin", '"a",@progbits',
                    ".hipFatBinSegment", '"aw",@progbits'))
    with open(os.path.join(out, "coff.s"), "w") as f:
        f.write(asm(".hip_fat", '"dr"', ".hipFatB", '"dw"'))
    print(f"{len(chosen)} bundles, {total} bytes of device code")


if __name__ == "__main__":
    main()
