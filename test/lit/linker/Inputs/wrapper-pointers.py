# Reads `llvm-readelf -h -S -r` output and counts the R_X86_64_RELATIVE
# relocations applied inside .hipFatBinSegment whose addend is the address of
# .rocm_kpack_ref (the wrappers' `binary` pointers after finalize).
import re
import sys

text = open(sys.argv[1]).read()
m = re.search(r"Type:\s+(\w+)", text)
print("Type:", m.group(1))
sections = {}
for name, addr, size in re.findall(
        r"\]\s+(\S+)\s+\w+\s+([0-9a-f]{16})\s+[0-9a-f]+\s+([0-9a-f]+)", text):
    sections[name] = (int(addr, 16), int(size, 16))
seg_addr, seg_size = sections[".hipFatBinSegment"]
ref_addr = sections[".rocm_kpack_ref"][0]
count = 0
for off, addend in re.findall(
        r"^([0-9a-f]{16})\s+[0-9a-f]+\s+R_X86_64_RELATIVE\s+([0-9a-f]+)", text,
        re.M):
    off = int(off, 16)
    if seg_addr <= off < seg_addr + seg_size and (off - seg_addr) % 24 == 8:
        if int(addend, 16) == ref_addr:
            count += 1
        else:
            print("wrapper pointer at 0x%x -> 0x%s (not the metadata)" % (off, addend))
print("wrapper pointers -> .rocm_kpack_ref:", count)
