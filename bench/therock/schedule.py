#!/usr/bin/env python3
"""Critical path of `kpack split`'s compression on T threads, from the sizes
of the code objects it archived (`kpack ls` of each output archive on
stdin: KEY ARCH ORDINAL ORIGINAL STORED lines).

The archive writer reads and compresses the entries in batches of
consecutive entries (add order: files in (prefix, path) order, each
binary's code objects in bundle order) of at most BATCH bytes; the threads
of a batch take its entries in ORDER (each the next free one) and the next
batch starts when all are done. A code object's cost is taken as
proportional to its size (zstd at one level). Prints, for T threads, the
sum of the batch makespans against the ideal (total / T): the speedup the
batching allows at best.

usage: schedule.py [--threads T] [--batch BYTES] [--order add|largest] < ls-lines
"""
import argparse
import re
import sys


def key_order(line):
    key, arch = line[0], line[1]
    path, _, n = key.rpartition("#")
    return (path, int(n), arch)


def makespan(costs, threads):
    free = [0.0] * threads
    for c in costs:
        i = free.index(min(free))
        free[i] += c
    return max(free)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=64 << 20)
    p.add_argument("--order", choices=["add", "largest"], default="add")
    a = p.parse_args()
    items = []
    for raw in sys.stdin:
        f = raw.split()
        if len(f) >= 5 and re.fullmatch(r"\d+", f[3]):
            items.append((f[0], f[1], int(f[3])))
    items.sort(key=key_order)
    sizes = [s for _, _, s in items]
    total = sum(sizes)
    span, begin = 0.0, 0
    batches = 0
    while begin < len(sizes):
        end, charged = begin, 0
        while end < len(sizes) and end - begin < 1024:
            if end > begin and charged + sizes[end] > a.batch:
                break
            charged += sizes[end]
            end += 1
        batch = sizes[begin:end]
        if a.order == "largest":
            batch = sorted(batch, reverse=True)
        span += makespan(batch, a.threads)
        batches += 1
        begin = end
    ideal = total / a.threads
    print(f"entries {len(sizes)}, {total} bytes, {batches} batches; "
          f"{a.threads} threads, order {a.order}: makespan {span / ideal:.4f} x ideal, "
          f"speedup bound {total / span:.3f}")


if __name__ == "__main__":
    main()
