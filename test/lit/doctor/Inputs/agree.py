#!/usr/bin/env python3
"""Checks that `kpack doctor`'s verdicts are what the stand-in HIP runtime
then does: for every binary x GPU of a doctor --json report, the binary is
run on the stand-in for that GPU (an executable itself, a shared library
through dlopen_host) and must succeed exactly when doctor says it loads and
so do the libraries of the report it needs (DT_NEEDED, transitively: a
program whose library fails fails too).

usage: agree.py REPORT.json DLOPEN_HOST [ENV=VALUE...]
Prints "agree: <binary> <gpu> <loads|fails>" per pair, and
"DISAGREE: ..." with the run's output for each pair where they differ
(exit 1).
"""
import json
import os
import subprocess
import sys


def needed(path):
    out = subprocess.run(["llvm-readelf", "--needed-libs", path],
                         capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("lib") and not line.startswith("libc."):
            names.append(line)
    return names


def main():
    report = json.load(open(sys.argv[1]))
    dlopen_host = sys.argv[2]
    extra_env = dict(a.split("=", 1) for a in sys.argv[3:])
    results = report["results"]
    by_gpu = {}
    for r in results:
        by_gpu.setdefault(r["gpu"], []).append(r)

    def library_result(name, gpu, exclude):
        for r in by_gpu[gpu]:
            if r is exclude:
                continue
            real = os.path.realpath(r["binary"])
            cand = os.path.join(os.path.dirname(r["binary"]), name)
            if os.path.exists(cand) and os.path.realpath(cand) == real:
                return r
        return None

    def expected(r, seen):
        ok = r["ok"]
        for name in needed(r["binary"]):
            lib = library_result(name, r["gpu"], r)
            if lib is not None and id(lib) not in seen:
                seen.add(id(lib))
                ok = ok and expected(lib, seen)
        return ok

    failed = False
    for r in results:
        kind = r.get("kind", "")
        if kind == "relocatable-object":
            continue
        cmd = [dlopen_host, r["binary"]] if kind == "shared-library" else [r["binary"]]
        env = dict(os.environ, HIP_STANDIN_AGENTS=r["gpu"], **extra_env)
        run = subprocess.run(cmd, env=env, capture_output=True, text=True)
        runs = run.returncode == 0
        want = expected(r, {id(r)})
        name = r["binary"]
        verdict = "loads" if runs else "fails"
        if runs == want:
            print("agree: %s %s %s" % (name, r["gpu"], verdict))
        else:
            failed = True
            print("DISAGREE: %s %s: doctor says %s (%s), the run %s (exit %d)"
                  % (name, r["gpu"], "it loads" if want else "it fails",
                     r["diagnosis"], verdict, run.returncode))
            print(run.stdout + run.stderr)
    sys.exit(1 if failed else 0)


main()
