#!/bin/bash
# Seed corpus of the manifest fuzzer (FuzzManifest.cpp): artifact manifests
# naming the scratch artifact's directories, and the hostile lines of issue
# 25 and earlier ones: a NUL or another control byte, "..", absolute, ".",
# empty components, symlinks (out -> .., lib/up -> ../bin), a file.
# usage: make_manifest_seeds.sh OUTDIR
set -euo pipefail
out=$1
rm -rf "$out" && mkdir -p "$out"
n=0
seed() { printf "$1" > "$out/seed$((n += 1))"; }
seed 'lib\n'
seed 'lib\nbin\nlib/sub\n'
seed 'lib\r\nbin\r\n'
seed ' lib \n\n\tbin\n'
seed 'lib\0\n'
seed 'lib/sub\0/x\n'
seed 'lib\tx\n'
seed 'lib\177\n'
seed '../a/lib\n'
seed '/etc\n'
seed './lib\n'
seed 'lib//sub\n'
seed 'lib/\n'
seed 'out\n'
seed 'out/a/lib\n'
seed 'lib/up\n'
seed 'lib/x\n'
seed 'missing\nlib\n'
