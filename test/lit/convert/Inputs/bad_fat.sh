#!/bin/bash
# Builds a PIE whose one offload bundle has a device entry of our choosing:
# the bundle of tu_a.hip (gfx1100) is replaced, in the fat object, by one
# that make_bundle.py wrote.
# usage: bad_fat.sh CLANGXX INCLUDE_DIR OUTDIR NAME ID PAYLOAD
#   ID       device entry ID (make_bundle.py escapes); PAYLOAD: its bytes,
#            or "code-object" for tu_a's gfx1100 code object
# Leaves OUTDIR/NAME.o (fat object) and OUTDIR/NAME (linked PIE).
set -e
CXX=$1 INC=$2 OUT=$3 NAME=$4 ID=$5 PAYLOAD=$6
SRC=$(dirname "$0")
HIP="$CXX -x hip -nogpuinc -nogpulib -I$INC --offload-arch=gfx1100"
mkdir -p "$OUT"
if [ ! -f "$OUT/main_a.o" ]; then
  $HIP -c "$SRC/tu_a.hip" -o "$OUT/tu_a.o"
  $HIP --cuda-device-only --no-gpu-bundle-output -c "$SRC/tu_a.hip" -o "$OUT/tu_a.co"
  echo 'void launch_a(); int main() { launch_a(); return 0; }' |
    $CXX -x c++ -c - -o "$OUT/main_a.o"
fi
[ "$PAYLOAD" = code-object ] && PAYLOAD=$OUT/tu_a.co
python3 "$SRC/make_bundle.py" "$OUT/$NAME.bundle" "$ID" "$PAYLOAD"
llvm-objcopy --update-section ".hip_fatbin=$OUT/$NAME.bundle" "$OUT/tu_a.o" "$OUT/$NAME.o"
$CXX -fuse-ld=lld -pie "$OUT/$NAME.o" "$OUT/main_a.o" \
  -Wl,--unresolved-symbols=ignore-all -o "$OUT/$NAME"
