#!/bin/bash
# Seed corpus of the unbundle fuzzer (FuzzUnbundle.cpp): a fat ELF object
# of one TU for gfx1100 and gfx90a:xnack+ (uncompressed bundle), the same
# compressed (CCOB), the raw bundles of their .hip_fatbin sections, and the
# hostile entry IDs of issue 25 ("../../../../tmp/P-amd-x--gfx1100", a kind
# "..//t") in the object and in the raw bundle.
# usage: make_unbundle_seeds.sh CLANGXX INCLUDE_DIR LLVM_BIN PYTHON OUTDIR
set -euo pipefail
CXX=$1 INC=$2 LLVM_BIN=$3 PYTHON=$4 OUT=$5
SRC=$(cd "$(dirname "$0")/../../lit" && pwd)
rm -rf "$OUT" && mkdir -p "$OUT/build" "$OUT/corpus"
B=$OUT/build C=$OUT/corpus
HIP="$CXX -x hip -nogpuinc -nogpulib -I$INC -I$SRC/split/Inputs -O1 -fPIC
     --offload-arch=gfx1100 --offload-arch=gfx90a:xnack+"
$HIP -c "$SRC/split/Inputs/foo_b.hip" -o "$C/fat.o"
$HIP --offload-compress -c "$SRC/split/Inputs/foo_b.hip" -o "$C/ccob.o"
"$LLVM_BIN/llvm-objcopy" --dump-section=.hip_fatbin="$C/fat.bundle" "$C/fat.o"
"$LLVM_BIN/llvm-objcopy" --dump-section=.hip_fatbin="$C/ccob.bundle" "$C/ccob.o"
ID=hipv4-amdgcn-amd-amdhsa--gfx1100
for f in fat.o fat.bundle; do
  cp "$C/$f" "$C/climb.$f"
  "$PYTHON" "$SRC/unbundle/Inputs/set_entry_id.py" "$C/climb.$f" $ID ../../../../tmp/P-amd-x--gfx1100
  cp "$C/$f" "$C/kind.$f"
  "$PYTHON" "$SRC/unbundle/Inputs/set_entry_id.py" "$C/kind.$f" $ID ..//t-amdgcn-amd-amdhsa--gfx1100
done
rm -rf "$B"
