#!/usr/bin/env python3
"""The archive writer's schedule, from a --time-trace (docs/benchmarks.md,
"Writer: the schedule").

Reads the Chrome trace one `kpack ... --time-trace`, `ld.kpack --time-trace`
or `kpack-writer-bench --time-trace` wrote, takes each entry's recorded work
(its Read, Hash and Frame events; its Write; its Place on the in-order
thread) and the serial work around the pass, and prints

- the measured wall time of the pass and of the whole write;
- the bound at N threads: max(total CPU / N, the longest chain of work that
  cannot overlap, the largest frame);
- the wall time the writer's scheduling rule gives at N threads when the
  recorded times are replayed through it (a discrete-event simulation), for
  the rule of lib/format/include/kpack/WriteSchedule.h ("new") and for the
  batches it replaced ("batches": 64 MiB batches of consecutive entries,
  largest first within a batch, a barrier and the in-order placement after
  each, every thread writing its frames of a batch when it starts on the
  next one).

The model is checked by replaying a trace at the thread count it was
recorded with: `--threads` defaults to the recorded count, and the measured
wall time is printed beside it.

usage: trace_model.py TRACE.json [--threads N[,N...]] [--budget MiB]
                      [--charge view|copy] [--json]
  --budget: the writer's memory budget (default: the writer's default at
            each thread count; the batches' size for the old rule, 64).
  --charge: what an entry's read holds in the writer's buffers (its charge
            against the budget): "view" (0: bytes held by the caller, as
            kpack-writer-bench's) or "copy" (its size: file ranges and
            callbacks, as kpack convert/split read them).
"""
import argparse
import heapq
import json
import re
import sys

WORK = ("Read", "Hash", "Frame")
DETAIL = re.compile(r"#(\d+) (\d+)")
UNKNOWN_SIZE_CHARGE = 1 << 20
# ArchiveWriterOptions::BatchBytes's default (kpack/ArchiveWriter.h).
MIN_BATCH_BYTES = 64 << 20
BATCH_BYTES_PER_THREAD = 8 << 20
MAX_BATCH_ENTRIES = 1024


class Entry:
    __slots__ = ("pos", "hint", "size", "work", "write", "place", "frame")

    def __init__(self, pos):
        self.pos = pos
        self.hint = 0      # the Read event's size hint
        self.size = 0      # bytes read
        self.work = 0.0    # Read + Hash + Frame, us
        self.write = 0.0   # its Write, us
        self.place = 0.0   # its Place (in order), us
        self.frame = 0     # bytes written (frame with its u32, or raw)


def load(path):
    with open(path) as f:
        trace = json.load(f)
    events = [e for e in trace["traceEvents"]
              if e.get("ph") == "X" and not e["name"].startswith("Total ")]
    entries = {}
    whole = None
    threads_recorded = None
    workers = set()
    for e in events:
        name = e["name"]
        detail = e.get("args", {}).get("detail", "")
        if name == "WriteArchives":
            if whole is None or e["dur"] > whole["dur"]:
                whole = e
            m = re.search(r"(\d+) threads", detail)
            if m:
                threads_recorded = int(m.group(1))
            continue
        m = DETAIL.match(detail)
        if not m or name not in WORK + ("Write", "Place"):
            continue
        pos, num = int(m.group(1)), int(m.group(2))
        en = entries.setdefault(pos, Entry(pos))
        if name in WORK:
            en.work += e["dur"]
            workers.add(e["tid"])
            if name == "Read":
                en.hint = num
            else:
                en.size = num
        elif name == "Write":
            en.write += e["dur"]
            en.frame = num
        else:
            en.place += e["dur"]
    if whole is None or not entries:
        sys.exit(f"{path}: no WriteArchives event with entry events: not a "
                 "--time-trace of an archive writer")
    order = [entries[p] for p in sorted(entries)]
    for en in order:
        if not en.size:
            en.size = en.hint
    # The pass: from the first entry event to the last; the rest of the
    # write (opening the files, the TOC, the commit) is serial.
    first = min(e["ts"] for e in events
                if e["name"] in WORK + ("Write", "Place"))
    last = max(e["ts"] + e["dur"] for e in events
               if e["name"] in WORK + ("Write", "Place"))
    serial_before = max(0.0, first - whole["ts"])
    serial_after = max(0.0, whole["ts"] + whole["dur"] - last)
    return {
        "entries": order,
        "wall": float(whole["dur"]),
        "pass": float(last - first),
        "serial": serial_before + serial_after,
        "threads": threads_recorded or len(workers) or 1,
    }


def charge(en, mode):
    return 0 if mode == "view" else (en.hint or UNKNOWN_SIZE_CHARGE)


def cost(en):
    return en.hint or UNKNOWN_SIZE_CHARGE


def bound(t, n):
    es = t["entries"]
    cpu = sum(e.work + e.write + e.place for e in es)
    chain = t["serial"] + max(sum(e.place for e in es),
                              max(e.work + e.write + e.place for e in es))
    largest = max(e.work for e in es)
    return {"cpu": cpu + t["serial"], "cpu_per_thread": cpu / n + t["serial"],
            "chain": chain, "largest": largest + t["serial"],
            "bound": max(cpu / n + t["serial"], chain, largest + t["serial"])}


def model_batches(t, n, budget, detail=None):
    """The batch rule the writer had before (WriterFrames.cpp at 41af7b6).
    With detail (a list), one (entries, MiB, cpu, largest, makespan) tuple
    per batch is appended to it."""
    es = t["entries"]
    now = 0.0
    pending = [[] for _ in range(n)]  # writes each thread does next batch
    begin = 0
    while begin < len(es):
        end, charged = begin, 0
        while end < len(es) and end - begin < MAX_BATCH_ENTRIES:
            c = cost(es[end])
            if end > begin and charged + c > budget:
                break
            charged += c
            end += 1
        batch = es[begin:end]
        pick = sorted(range(len(batch)), key=lambda i: (-batch[i].hint, i))
        workers = min(n, len(batch))
        free = []
        for w in range(workers):
            free.append((now + sum(pending[w]), w))
        heapq.heapify(free)
        took = [[] for _ in range(n)]
        for i in pick:
            at, w = heapq.heappop(free)
            took[w].append(batch[i])
            heapq.heappush(free, (at + batch[i].work, w))
        end_time = max(at for at, _ in free)
        # Threads the batch did not need write their frames on the caller.
        end_time += sum(sum(pending[w]) for w in range(workers, n))
        if detail is not None:
            detail.append((len(batch), sum(e.size for e in batch) / (1 << 20),
                           sum(e.work for e in batch) / 1e3,
                           max(e.work for e in batch) / 1e3,
                           (end_time - now) / 1e3))
        now = end_time + sum(e.place for e in batch)
        pending = [[e.write for e in took[w]] for w in range(n)]
        begin = end
    now += max(sum(p) for p in pending)  # the last batch's writes
    return now + t["serial"]


def model_new(t, n, budget, mode):
    """WriteSchedule's rule (lib/format/include/kpack/WriteSchedule.h) with
    the frames pass of WriterFrames.cpp: threads write placed results first,
    else start the entry the schedule gives, else wait; the thread that
    finishes an entry places every finished entry in order."""
    es = t["entries"]
    count = len(es)
    order = list(range(count))
    if n > 1:
        key, before = [], 0.0
        for e in es:
            key.append(before / n - float(cost(e)))
            before += float(cost(e))
        order.sort(key=lambda i: key[i])  # stable: ties in entry order
    state = [0] * count           # 0 waiting, 1 running, 2 done
    held_by = [0] * count
    held = 0
    nxt = first_waiting = first_not_done = 0
    started = placed = 0
    writes = []                   # placed entries to write, in order
    now = 0.0
    idle = n
    events = []                   # (time, seq, kind, entry)
    seq = 0
    peak = 0

    def schedule_next():
        nonlocal nxt, first_waiting, first_not_done, held, started, peak
        if started == count:
            return None
        while state[order[nxt]] != 0:
            nxt += 1
        c = order[nxt]
        if not (held == 0 or held + charge(es[c], mode) <= budget):
            while state[first_waiting] != 0:
                first_waiting += 1
            while first_not_done < count and state[first_not_done] == 2:
                first_not_done += 1
            if first_waiting != first_not_done:
                return None
            c = first_waiting
        state[c] = 1
        held_by[c] = charge(es[c], mode)
        held += held_by[c]
        peak = max(peak, held)
        started += 1
        return c

    def dispatch():
        nonlocal idle, seq
        while idle:
            if writes:
                i = writes.pop(0)
                events.append((now + es[i].write, seq, "wrote", i))
            else:
                i = schedule_next()
                if i is None:
                    return
                events.append((now + es[i].work, seq, "done", i))
            seq += 1
            idle -= 1
        heapq.heapify(events)

    dispatch()
    while events:
        now, _, kind, i = heapq.heappop(events)
        if kind == "wrote":
            held -= held_by[i]
            held_by[i] = 0
            idle += 1
        elif kind == "free":
            idle += 1
        else:
            state[i] = 2
            held -= held_by[i]
            held_by[i] = es[i].frame
            held += held_by[i]
            peak = max(peak, held)
            # This thread places what is ready, in order, then is free.
            busy = 0.0
            while placed < count and state[placed] == 2:
                busy += es[placed].place
                writes.append(placed)
                placed += 1
            heapq.heappush(events, (now + busy, seq, "free", i))
            seq += 1
        dispatch()
    return now + t["serial"], peak


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("trace")
    p.add_argument("--threads", default="")
    p.add_argument("--budget", type=float, default=0,
                   help="MiB (ArchiveWriterOptions::BatchBytes); default: "
                   "the writer's, max(64, 8 x threads)")
    p.add_argument("--charge", choices=("view", "copy"), default="view")
    p.add_argument("--json", action="store_true")
    p.add_argument("--batches", action="store_true",
                   help="also list the old rule's batches at each thread count")
    a = p.parse_args()
    t = load(a.trace)
    threads = ([int(x) for x in a.threads.split(",")] if a.threads
               else [t["threads"]])
    es = t["entries"]
    largest = max(es, key=lambda e: e.work)
    rows = []
    for n in threads:
        budget = (int(a.budget * (1 << 20)) if a.budget
                  else max(MIN_BATCH_BYTES, BATCH_BYTES_PER_THREAD * n))
        b = bound(t, n)
        new, peak = model_new(t, n, budget, a.charge)
        rows.append({"threads": n, **{k: v / 1e3 for k, v in b.items()},
                     "model_batches": model_batches(
                         t, n, int(a.budget * (1 << 20)) or MIN_BATCH_BYTES) / 1e3,
                     "model_new": new / 1e3,
                     "model_new_peak_held_mib": peak / (1 << 20)})
    out = {"trace": a.trace, "recorded_threads": t["threads"],
           "entries": len(es), "bytes": sum(e.size for e in es),
           "measured_wall_ms": t["wall"] / 1e3,
           "measured_pass_ms": t["pass"] / 1e3,
           "serial_ms": t["serial"] / 1e3,
           "largest_frame": {"position": largest.pos, "bytes": largest.size,
                             "ms": largest.work / 1e3},
           "rows": rows}
    if a.json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return
    print(f"{a.trace}: {len(es)} entries, {out['bytes'] / (1 << 20):.1f} MiB, "
          f"recorded at {t['threads']} threads: write {out['measured_wall_ms']:.1f} ms "
          f"(pass {out['measured_pass_ms']:.1f} ms, serial {out['serial_ms']:.1f} ms)")
    print(f"largest frame: #{largest.pos}, {largest.size} bytes, "
          f"{largest.work / 1e3:.1f} ms")
    print("threads  cpu/N   chain  largest  bound | model: batches  new (x bound)  peak held")
    for r in rows:
        print(f"{r['threads']:7d} {r['cpu_per_thread']:7.1f} {r['chain']:7.1f} "
              f"{r['largest']:8.1f} {r['bound']:6.1f} | "
              f"{r['model_batches']:14.1f} {r['model_new']:6.1f} "
              f"({r['model_new'] / r['bound']:.2f}) {r['model_new_peak_held_mib']:8.1f} MiB")
    if a.batches:
        for n in threads:
            detail = []
            model_batches(t, n, int(a.budget * (1 << 20)) or MIN_BATCH_BYTES,
                          detail)
            print(f"batches at {n} threads: entries, MiB, cpu ms, largest "
                  "frame ms, makespan ms (>= max(largest, cpu / N))")
            for d in detail:
                print("  %4d %7.1f %8.1f %8.1f %8.1f" % d)


if __name__ == "__main__":
    main()
