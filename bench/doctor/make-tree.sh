#!/bin/bash
# Issue 28: a PyTorch-sized install tree for `kpack doctor`: N HIP shared
# libraries (default 500) converted for 20 GPU targets, TheRock's layout
# (lib/libNNN.so with the search path ../.kpack/demo_@GFXARCH@.kpack, one
# archive per target holding every library's code object: 20 archives of N
# entries), plus FILES files without device code (default 3000: Python
# sources, headers, data) in a few hundred directories.
#
# usage: bench/doctor/make-tree.sh BUILD_DIR OUT_DIR [N [FILES]]
# The 20 targets: TARGETS (environment, comma-separated) or the list below.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
OUT=$2
N=${3:-500}
FILES=${4:-3000}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TARGETS=${TARGETS:-gfx900,gfx906:xnack-,gfx908:xnack-,gfx90a:xnack-,gfx90a:xnack+,gfx942:sramecc+:xnack-,gfx950,gfx1010,gfx1030,gfx1031,gfx1100,gfx1101,gfx1102,gfx1150,gfx1151,gfx1200,gfx1201,gfx9-generic,gfx10-3-generic,gfx11-generic}
KPACK=$BUILD/bin/kpack
rm -rf "$OUT"
W=$OUT.work
rm -rf "$W"
mkdir -p "$W/conv" "$OUT/lib" "$OUT/.kpack"

# One fat shared library for the 20 targets.
ARCHS=""
for T in ${TARGETS//,/ }; do ARCHS="$ARCHS --offload-arch=$T"; done
clang++-22 -x hip -nogpuinc -nogpulib -I"$SRC/test/inputs" $ARCHS -O1 -fPIC \
  -shared "$SRC/test/inputs/kernels_single.hip" -o "$W/fat.so"

# N converted copies, each its own kernel name (TOC keys libNNN#0), per-target
# archives merged into one per target.
for I in $(seq -f '%03g' 0 $((N - 1))); do
  "$KPACK" convert "$W/fat.so" -o "$OUT/lib/lib$I.so" --kpack-name="lib$I" \
    --kpack-dir="$W/conv/$I" --kpack-search-path='../.kpack/demo_@GFXARCH@.kpack' \
    --quiet
done
for T in ${TARGETS//,/ }; do
  "$KPACK" merge -o "$OUT/.kpack/demo_$T.kpack" --group demo "$W"/conv/*/"lib"*"_$T.kpack" \
    > /dev/null
done

# Files without device code.
for I in $(seq 0 $((FILES - 1))); do
  D="$OUT/python/pkg$((I % 300))/sub$((I % 7))"
  mkdir -p "$D"
  printf 'x = %d\n' "$I" > "$D/mod$I.py"
done
rm -rf "$W"
echo "$N HIP libraries, $(echo "${TARGETS//,/ }" | wc -w) targets, $FILES other files in $OUT"
