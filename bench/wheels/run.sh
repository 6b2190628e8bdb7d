#!/bin/bash
# Wheel sizes before and after `kpack split-wheel` (docs/benchmarks.md,
# section "Wheels"):
#   1. the test package of test/lit/wheels (two HIP libraries for
#      gfx90a:xnack+, gfx942 and gfx11-generic, a symlinked soname, AOTriton-
#      style images), split with --split-databases aotriton;
#   2. a wheel around Debian's librocsparse (1.3 GB, seven targets, six of
#      which have a device-wheel bundle):
#      rocsparse_bench/__init__.py and rocsparse_bench/lib/librocsparse.so.0,
#      packed as `wheel` packs (deflate), split with zstd-3 archives.
# For each: the fat wheel, the host wheel and every device wheel in bytes,
# the host wheel plus one device wheel against the fat wheel, and the
# split's wall time and peak RSS (GNU time).
#
# usage: bench/wheels/run.sh BUILD_DIR [LIBRARY]
# Needs /usr/bin/time (Debian package `time`), /usr/bin/python3, clang-22.
set -euo pipefail
BUILD=$(cd "${1:?usage: run.sh BUILD_DIR [LIBRARY]}" && pwd)
LIBRARY=${2:-/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
INPUTS=$SRC/test/lit/wheels/Inputs
KPACK=$BUILD/bin/kpack
[ -x "$KPACK" ] || { echo "error: $KPACK not built" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# report FAT_WHEEL SPLIT_DIR: sizes of the fat, host and device wheels.
report() {
  local FAT=$1 DIR=$2 HOST MIN=0 MAX=0
  local FATSIZE=$(stat -c %s "$FAT")
  HOST=$(stat -c %s "$DIR/$(basename "$FAT")")
  echo "fat wheel $(basename "$FAT"): $FATSIZE bytes"
  echo "host wheel: $HOST bytes ($(awk -v h="$HOST" -v f="$FATSIZE" 'BEGIN{printf "%.1f%%", 100*h/f}') of the fat wheel)"
  for W in "$DIR"/*_device_*.whl; do
    local S=$(stat -c %s "$W")
    echo "device wheel $(basename "$W"): $S bytes; host + this: $(awk -v s="$S" -v h="$HOST" -v f="$FATSIZE" 'BEGIN{printf "%.1f%%", 100*(s+h)/f}') of the fat wheel"
  done
}

# split FAT OUTDIR [options]: one timed split.
split() {
  local FAT=$1 OUT=$2
  shift 2
  /usr/bin/time -v -o "$WORK/time.txt" "$KPACK" split-wheel "$FAT" --output-dir "$OUT" --quiet "$@"
  local WALL=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
  local RSS=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
  echo "split: wall $WALL, peak RSS $((RSS / 1024)) MiB"
}

echo "== test package ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
bash "$INPUTS/build_fat_wheel.sh" /usr/lib/llvm-22/bin/clang++ "$SRC/test/inputs" \
  "$BUILD/lib" /usr/bin/python3 "$WORK/pkg/fat"
split "$WORK/pkg/fat/pkg-1.0-py3-none-linux_x86_64.whl" "$WORK/pkg/split" --split-databases aotriton
report "$WORK/pkg/fat/pkg-1.0-py3-none-linux_x86_64.whl" "$WORK/pkg/split"

echo "== $LIBRARY ($(stat -c %s "$LIBRARY") bytes)"
mkdir -p "$WORK/rs/tree/rocsparse_bench/lib"
echo "import os" > "$WORK/rs/tree/rocsparse_bench/__init__.py"
cp "$LIBRARY" "$WORK/rs/tree/rocsparse_bench/lib/librocsparse.so.0"
START=$(date +%s.%N)
/usr/bin/python3 "$INPUTS/pack_wheel.py" "$WORK/rs/tree" "$WORK/rs/fat" \
  --name rocsparse_bench --version 5.2 > /dev/null
echo "packing the fat wheel (zipfile, deflate): $(awk -v s="$START" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f s", e-s}')"
rm -rf "$WORK/rs/tree"
FAT=$WORK/rs/fat/rocsparse_bench-5.2-py3-none-linux_x86_64.whl
cat "$FAT" > /dev/null
# gfx803 has no device-wheel bundle (rocm_bootstrap's tables, docs/wheels.md):
# the other six targets.
split "$FAT" "$WORK/rs/split" \
  --targets gfx1030,gfx900:xnack-,gfx906:xnack-,gfx908:xnack-,gfx90a:xnack+,gfx90a:xnack-
report "$FAT" "$WORK/rs/split"
