#!/bin/bash
# Lays out a TheRock-shaped Windows artifact from the programs of
# `test/lit/windows/Inputs/build.sh BUILD dll` (run first):
#   ARTIFACT/artifact_manifest.txt         one prefix, prog/stage
#   prog/stage/bin/prog.dll                fat DLL (gfx90a:xnack+, gfx1100;
#                                          one plain, one CCOB bundle)
#   prog/stage/bin/use.exe                 imports it, no device code
#   prog/stage/lib/prog.lib                its import library (an ar archive)
#   prog/stage/bin/rocblas/library/TensileLibrary_lazy_gfx1100.dat,
#     TensileLibrary_lazy_gfx90a-xnack+.dat  database files (rocblas handler;
#                                          Tensile's hyphen form, no ':')
#   prog/stage/share/doc/prog/README       text
# usage: win_artifact.sh BUILD ARTIFACT
set -euo pipefail
B=$1 A=$2
P=$A/prog/stage
mkdir -p "$P/bin/rocblas/library" "$P/lib" "$P/share/doc/prog"
echo prog/stage > "$A/artifact_manifest.txt"
cp "$B/prog.dll" "$B/use.exe" "$P/bin/"
cp "$B/libprog.a" "$P/lib/prog.lib"
for T in gfx1100 gfx90a-xnack+; do
  echo "rocblas lazy library for $T" > "$P/bin/rocblas/library/TensileLibrary_lazy_$T.dat"
done
echo "prog: a HIP DLL" > "$P/share/doc/prog/README"
