#!/bin/bash
# Seed corpora of the ELF-side fuzzers, from small programs built here:
#   host/    linked binaries (PIE, non-PIE, shared, RELR, one with a CCOB
#            bundle, all multi-TU except the CCOB one) and their converted forms
#   object/  fat objects (plain and CCOB), one made kpack-ready, an archive
# usage: make_seeds.sh CLANGXX INCLUDE_DIR CONVERT_INPUTS KPACK_CONVERT KPACK_READY LLVM_BIN OUTDIR
set -euo pipefail
CXX=$1 INC=$2 SRC=$3 CONVERT=$4 READY=$5 LLVM_BIN=$6 OUT=$7
rm -rf "$OUT" && mkdir -p "$OUT/build" "$OUT/host" "$OUT/object"
B=$OUT/build
# No stand-in here: the HIP runtime's symbols stay unresolved.
bash "$SRC/build.sh" "$CXX" "$INC" /nonexistent "$B" pie nopie shared relr tiny
for v in pie nopie libprog.so relr tiny; do
  cp "$B/$v" "$OUT/host/$v"
  "$CONVERT" "$B/$v" -o "$OUT/host/$v.converted" --kpack-output="$B/$v.kpack" --quiet
done
cp "$B/a.o" "$B/b.o" "$B/c.o" "$OUT/object/"
"$READY" rewrite "$B/a.o" -o "$OUT/object/a.ready.o"
"$LLVM_BIN/llvm-ar" rcs "$OUT/object/lib.a" "$B/a.o" "$B/b.o"
rm -rf "$B"
