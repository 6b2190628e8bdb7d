#!/usr/bin/env python3
"""Writes the TUs of the scale benchmark's "chain" generator (GEN=chain).

usage: gen-chain-tu.py DIR N [KERNELS [STEPS]]

Writes DIR/tu0.hip .. DIR/tu<N-1>.hip (a file is rewritten only when its text
changes, so objects compiled from it are reused). TU i holds KERNELS kernel
templates (default 16), each instantiated for float and double; a kernel loads
8 values per work item and runs a straight-line chain of STEPS (default 150)
arithmetic steps on them (multiply-add, multiply-subtract, division, square
root, min, max, with constants), storing one value and reloading another every
32 steps and storing all 8 at the end. The constants and the sequence of
operations come from a pseudo-random generator seeded with i and the kernel's
number, so no two kernels or TUs have the same code and neither the linker nor
the archives' content keys can fold them together. No fast-math: the compiler
may contract a multiply and an add into an fma but cannot reassociate or fold
the chain away, so the device code grows linearly with KERNELS x STEPS while
compiling stays cheap (one basic block per kernel, nothing to unroll or
vectorize; short kernels, because the backend's cost grows faster than
linearly with the length of one block). TU i's host part has launch_<i>(),
which launches every kernel of the TU.
"""
import os
import random
import sys

HELPERS = [
    "static __device__ inline float sq(float x) { return __builtin_sqrtf(__builtin_fabsf(x)); }",
    "static __device__ inline double sq(double x) { return __builtin_sqrt(__builtin_fabs(x)); }",
    "static __device__ inline float mn(float x, float y) { return __builtin_fminf(x, y); }",
    "static __device__ inline double mn(double x, double y) { return __builtin_fmin(x, y); }",
    "static __device__ inline float mx(float x, float y) { return __builtin_fmaxf(x, y); }",
    "static __device__ inline double mx(double x, double y) { return __builtin_fmax(x, y); }",
]

# Operation mix: 2 multiply-add, 2 multiply-subtract, 1 product plus constant,
# 3 divisions, 2 square roots, 1 min, 1 max in 12.
OPS = ["madd", "madd", "msub", "msub", "pc", "div", "div", "div", "sqrt", "sqrt", "min", "max"]


def step(rng):
    d, p, q = rng.sample(range(8), 3)
    c = f"T({rng.uniform(0.5, 2.0):.6f})"
    op = rng.choice(OPS)
    e = {
        "madd": f"v{p} * {c} + v{q}",
        "msub": f"v{p} - v{q} * {c}",
        "pc": f"v{p} * v{q} + {c}",
        "div": f"v{p} / (v{q} + {c})",
        "sqrt": f"sq(v{p} + {c}) + v{q}",
        "min": f"mn(v{p}, v{q}) * {c}",
        "max": f"mx(v{p}, v{q} * {c})",
    }[op]
    return d, p, e


def tu(index, kernels, steps):
    out = ['#include "hip_min.h"',
           f"// TU {index}: {kernels} straight-line kernels of {steps} steps, float and double",
           "// (bench/scale/gen-chain-tu.py)"] + HELPERS
    for k in range(kernels):
        rng = random.Random(index * 1000003 + k)
        name = f"chain_{index}_{k}"
        out.append("template <typename T>")
        out.append(f"__global__ void {name}(const T *a, T *c) {{")
        out.append("  unsigned x = __builtin_amdgcn_workitem_id_x() * 16u;")
        for v in range(8):
            out.append(f"  T v{v} = a[x + {v}u];")
        for s in range(steps):
            d, p, e = step(rng)
            out.append(f"  v{d} = {e};")
            if s % 32 == 31:
                out.append(f"  c[x + {d}u] = v{d};")
                out.append(f"  v{p} = a[x + {s % 8 + 8}u] + v{p};")
        for v in range(8):
            out.append(f"  c[x + {v}u] = v{v};")
        out.append("}")
        out.append(f"template __global__ void {name}<float>(const float *, float *);")
        out.append(f"template __global__ void {name}<double>(const double *, double *);")
    out.append(f"void launch_{index}() {{")
    for k in range(kernels):
        for t in ("float", "double"):
            out.append(f"  chain_{index}_{k}<{t}><<<1, 1>>>(nullptr, nullptr);")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: gen-chain-tu.py DIR N [KERNELS [STEPS]]")
    outdir, n = sys.argv[1], int(sys.argv[2])
    kernels = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else 150
    for i in range(n):
        path = os.path.join(outdir, f"tu{i}.hip")
        text = tu(i, kernels, steps)
        try:
            with open(path) as f:
                if f.read() == text:
                    continue
        except FileNotFoundError:
            pass
        with open(path + ".new", "w") as f:
            f.write(text)
        os.replace(path + ".new", path)


if __name__ == "__main__":
    main()
