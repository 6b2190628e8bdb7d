#!/usr/bin/env python3
"""Enforces the dependency table of docs/ARCHITECTURE.md.

1. Every `#include "..."` of a project header in a folder's sources must name
   a header of the folder itself or of a folder the table allows.
2. The no-LLVM folders include no LLVM, clang or lld header; lib/support and
   lib/format include only LLVM's Support library (llvm/Support, llvm/ADT).
3. The shared libraries that CLR, stock HIP runtimes and the tests load
   (librocm_kpack.so, librocm_kpack_hip.so, libhip_standin.so) need no LLVM
   library (NEEDED entries of `readelf -d`).

usage: check_layering.py SOURCE_DIR [--readelf READELF --lib-dir DIR]
Prints one line per violation and exits 1 if there is any.
"""
import argparse
import os
import re
import subprocess
import sys

# folder -> folders its sources may include headers of (besides its own).
# Keep in sync with the table in docs/ARCHITECTURE.md.
ALLOWED = {
    "core": set(),
    "runtime": {"core"},
    "shim": {"runtime", "core"},
    "test/hip-standin": {"runtime", "core"},
    "lib/support": {"core"},
    "lib/format": {"lib/support", "core"},
    "lib/host": {"lib/support", "lib/format", "core"},
    "lib/ready": {"lib/support", "lib/format", "core"},
    "offload-wrapper": {"lib/ready", "lib/support", "lib/format", "core"},
    "clang-plugin": {"offload-wrapper", "lib/ready", "lib/support", "lib/format", "core"},
    "lib/emit": {"lib/host", "lib/support", "lib/format", "runtime", "core"},
    "lib/artifacts": {"lib/emit", "lib/host", "lib/support", "lib/format", "runtime", "core"},
    "lld-plugin": {"lib/emit", "lib/ready", "lib/host", "lib/support", "lib/format", "runtime", "core"},
    "lib/wheel": {"lib/artifacts", "lib/emit", "lib/host", "lib/support", "lib/format", "runtime", "core"},
    "utils": {"lib/wheel", "lib/emit", "lib/artifacts", "lib/ready", "lib/host", "lib/support", "lib/format", "runtime", "core"},
}
NO_LLVM = ["core", "runtime", "shim", "test/hip-standin"]
# Folders that may use LLVM's Support library (and ADT) but nothing else.
LLVM_SUPPORT_ONLY = ["lib/support", "lib/format"]
LLVM_SUPPORT_RE = re.compile(r"^llvm/(Support|ADT)/")
# Include roots: a header below one of these belongs to the folder.
INCLUDE_ROOTS = {
    "core/include": "core",
    "runtime/include": "runtime",
    "runtime/internal": "runtime",
    "lib/support/include": "lib/support",
    "lib/format/include": "lib/format",
    "lib/host/include": "lib/host",
    "lib/ready/include": "lib/ready",
    "lib/emit/include": "lib/emit",
    "lib/artifacts/include": "lib/artifacts",
    "lib/wheel/include": "lib/wheel",
    "offload-wrapper/include": "offload-wrapper",
}
NO_LLVM_LIBS = ["librocm_kpack.so", "librocm_kpack_hip.so", "libhip_standin.so"]
SOURCE_EXT = (".c", ".cpp", ".h", ".hpp", ".inc")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
LLVM_RE = re.compile(r"^(llvm|llvm-c|clang|lld)/")


def folder_of(rel):
    for folder in sorted(ALLOWED, key=len, reverse=True):
        if rel == folder or rel.startswith(folder + "/"):
            return folder
    return None


def header_index(src):
    index = {}
    for root, owner in INCLUDE_ROOTS.items():
        base = os.path.join(src, root)
        for dirpath, _, files in os.walk(base):
            for f in files:
                rel = os.path.relpath(os.path.join(dirpath, f), base)
                index.setdefault(rel, set()).add(owner)
    return index


def check_includes(src, problems):
    index = header_index(src)
    for folder in ALLOWED:
        base = os.path.join(src, folder)
        for dirpath, _, files in os.walk(base):
            for f in files:
                if not f.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, src)
                with open(path, errors="replace") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = INCLUDE_RE.match(line)
                        if not m:
                            continue
                        kind, name = m.groups()
                        where = "%s:%d" % (rel, lineno)
                        if folder in NO_LLVM and LLVM_RE.match(name):
                            problems.append("%s: %s may not use LLVM (%s)" %
                                            (where, folder, name))
                        if (folder in LLVM_SUPPORT_ONLY and LLVM_RE.match(name)
                                and not LLVM_SUPPORT_RE.match(name)):
                            problems.append(
                                "%s: %s may use only LLVM's Support library (%s)"
                                % (where, folder, name))
                        if kind != '"':
                            continue
                        local = os.path.join(dirpath, name)
                        if os.path.exists(local):
                            owner = folder_of(os.path.relpath(local, src))
                            owners = {owner} if owner else set()
                        else:
                            owners = index.get(name, set())
                        for owner in owners:
                            if owner != folder and owner not in ALLOWED[folder]:
                                problems.append(
                                    "%s: %s may not depend on %s (%s)" %
                                    (where, folder, owner, name))


def check_needed(readelf, lib_dir, problems):
    for lib in NO_LLVM_LIBS:
        path = os.path.join(lib_dir, lib)
        if not os.path.exists(path):
            problems.append("%s: not built" % path)
            continue
        out = subprocess.run([readelf, "-d", path], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            if "(NEEDED)" in line and re.search(r"lib(LLVM|clang|lld)", line):
                problems.append("%s: links LLVM: %s" % (lib, line.strip()))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("src")
    p.add_argument("--readelf")
    p.add_argument("--lib-dir")
    a = p.parse_args()
    problems = []
    check_includes(a.src, problems)
    if a.lib_dir:
        check_needed(a.readelf or "readelf", a.lib_dir, problems)
    for line in problems:
        print("layering: " + line)
    print("layering: %d violation(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
