# Prints the 64-bit FNV-1a hash of a file as 0x%016x.
import sys

h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
print("0x%016x" % h)
