#!/usr/bin/env python3
"""Writes a HIP source with N kernels of a few hundred instructions each: the
"large" case of the shim benchmark (several MB of code objects per target)."""
import sys

n = int(sys.argv[1])
print('#include "hip_min.h"')
for i in range(n):
    print(f'extern "C" __global__ void k{i}(float *p, int s) {{')
    print('  float a = p[s], b = p[s + 1];')
    print('#pragma unroll')
    print(f'  for (int j = 0; j < 64; ++j) {{ a = a * b + {i}.5f; b = b * a - j; }}')
    print('  p[s + 2] = a + b;')
    print('}')
