# usage: size-check.py FAT KPACK: checks that the kpack host binary is no
# larger than the fat one minus its .hip_fatbin plus 16 KiB.
import os
import re
import subprocess
import sys

fat, kpack = sys.argv[1], sys.argv[2]
out = subprocess.run(["llvm-readelf", "-S", "-W", fat], capture_output=True,
                     text=True, check=True).stdout
m = re.search(r"\.hip_fatbin\s+\w+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", out)
fatbin = int(m.group(1), 16)
limit = os.path.getsize(fat) - fatbin + 16384
size = os.path.getsize(kpack)
print("fat %d, .hip_fatbin %d, kpack %d, limit %d" % (os.path.getsize(fat), fatbin, size, limit))
print("within limit" if size <= limit else "TOO LARGE")
