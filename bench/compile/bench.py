#!/usr/bin/env python3
"""Compile+link cost of --emit-kpack (docs/benchmarks.md, section "Compile").

usage: bench/compile/bench.py BUILD_DIR [--tus 24] [--rounds 3]
                              [--archs gfx90a,gfx942,gfx1100]

Builds one generated HIP program (TUs with two kernels and a device variable
each, plus main) with the project's hipcc, fat and with --emit-kpack. The
machines this runs on are shared, so the two variants are measured as pairs:
every compile and the link run fat and kpack back to back (order alternating),
and each variant's wall time and CPU time (user+sys of the children) are summed
per round. Reported: per-round sums, and the median over rounds of the
kpack/fat ratios.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

TU = """#include "hip_min.h"
__device__ float bias{i} = {i}.0f;
__global__ void saxpy{i}(float a, const float *x, float *y, int n) {{
  int j = n - 1;
  for (int k = 0; k < 64; ++k) y[(j + k) % n] += a * x[(j * {i} + k) % n] + bias{i};
}}
__global__ void reduce{i}(const float *x, float *out, int n) {{
  float s = 0;
  for (int k = 0; k < n; ++k) s += x[k] * (k % {i} + 1);
  out[0] = s;
}}
int launch{i}() {{
  saxpy{i}<<<1, 1>>>(2.0f, nullptr, nullptr, 128);
  reduce{i}<<<1, 1>>>(nullptr, nullptr, 128);
  return 0;
}}
"""


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd):
    """Runs cmd; returns (wall seconds, CPU seconds)."""
    c0, t0 = cpu_of_children(), time.monotonic()
    subprocess.run(cmd, check=True)
    return time.monotonic() - t0, cpu_of_children() - c0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--tus", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--archs", default="gfx90a,gfx942,gfx1100")
    args = ap.parse_args()

    src = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    hipcc = os.path.join(os.path.abspath(args.build), "bin", "hipcc")
    common = ["-nogpuinc", "-nogpulib", "-I" + os.path.join(src, "test", "inputs"), "-O2"]
    common += ["--offload-arch=" + a for a in args.archs.split(",")]

    with tempfile.TemporaryDirectory() as work:
        sources = []
        for i in range(1, args.tus + 1):
            path = os.path.join(work, "tu%d.hip" % i)
            with open(path, "w") as f:
                f.write(TU.format(i=i))
            sources.append(path)
        main_src = os.path.join(work, "main.hip")
        with open(main_src, "w") as f:
            f.write('#include "hip_min.h"\n')
            f.write("".join("int launch%d();\n" % i for i in range(1, args.tus + 1)))
            f.write("int main() { int r = 0;\n")
            f.write("".join("  r += launch%d();\n" % i for i in range(1, args.tus + 1)))
            f.write("  return r; }\n")
        sources.append(main_src)

        variants = {
            "fat": ([], []),
            "kpack": (["--emit-kpack"], ["--emit-kpack=" + os.path.join(work, "kpack", "app.kpack")]),
        }
        ratios_wall, ratios_cpu = [], []
        for r in range(args.rounds):
            wall = {v: 0.0 for v in variants}
            cpu = {v: 0.0 for v in variants}
            for v in variants:
                os.makedirs(os.path.join(work, v), exist_ok=True)
            steps = []
            for s in sources:
                obj = os.path.splitext(os.path.basename(s))[0] + ".o"
                steps.append({v: [hipcc] + common + variants[v][0] + ["-c", s, "-o", os.path.join(work, v, obj)]
                              for v in variants})
            steps.append({v: [hipcc, "-no-hip-rt"] +
                          [os.path.join(work, v, os.path.splitext(os.path.basename(s))[0] + ".o") for s in sources] +
                          ["-Wl,--unresolved-symbols=ignore-all"] + variants[v][1] +
                          ["-o", os.path.join(work, v, "app")]
                          for v in variants})
            for n, step in enumerate(steps):
                order = list(variants) if (n + r) % 2 == 0 else list(reversed(variants))
                for v in order:
                    w, c = run(step[v])
                    wall[v] += w
                    cpu[v] += c
            ratios_wall.append(wall["kpack"] / wall["fat"])
            ratios_cpu.append(cpu["kpack"] / cpu["fat"])
            print("round %d: wall fat %.2f s, kpack %.2f s (x%.3f); cpu fat %.2f s, kpack %.2f s (x%.3f)"
                  % (r + 1, wall["fat"], wall["kpack"], ratios_wall[-1],
                     cpu["fat"], cpu["kpack"], ratios_cpu[-1]), flush=True)

        size = lambda *p: os.path.getsize(os.path.join(work, *p))
        print("TUs %d (+ main), archs %s, rounds %d" % (args.tus, args.archs, args.rounds))
        print("median ratio kpack/fat: wall %.3f, cpu %.3f"
              % (statistics.median(ratios_wall), statistics.median(ratios_cpu)))
        print("sizes: fat binary %d B; kpack binary %d B + archive %d B"
              % (size("fat", "app"), size("kpack", "app"), size("kpack", "app.kpack")))


if __name__ == "__main__":
    sys.exit(main())
