#!/usr/bin/env bash
# Registration cost per binary: HIPF (fat, bundle in the image) vs HIPK through
# librocm_kpack_hip.so, for a small and a large device-code payload, both
# holding the same four targets. Prints a Markdown table (docs/benchmarks.md).
#   bench/shim/run.sh <build-dir> [processes per case, default 15]
set -euo pipefail
BUILD=$(realpath "$1")
RUNS=${2:-15}
HERE=$(dirname "$(realpath "$0")")
SRC=$(realpath "$HERE/../..")
LLVM=/usr/lib/llvm-22/bin
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
TARGETS="gfx90a:xnack+ gfx942:sramecc+:xnack- gfx1100 gfx1201"
AGENT=gfx1100

"$LLVM/clang" -shared -fPIC -O2 "$HERE/noop_runtime.c" \
  -Wl,--version-script="$HERE/noop_runtime.map" -o "$WORK/libnoop.so"

cp "$SRC/test/lit/shim/Inputs/kernels.hip" "$WORK/small.hip"
python3 "$HERE/gen_kernels.py" 300 > "$WORK/large.hip"

# median of column $1 over the runs
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "| case | code object ($AGENT) | fat bundle | .kpack (zstd) | fat: first registration | HIPK+shim: first registration | fat: later registrations | HIPK+shim: later registrations |"
echo "|---|---|---|---|---|---|---|---|"
for CASE in small large; do
  ENTRIES=() BUNDLE_TARGETS=host-x86_64-unknown-linux-gnu BUNDLE_INPUTS=-input=/dev/null
  for T in $TARGETS; do
    CO="$WORK/$CASE.${T//:/_}.co"
    "$LLVM/clang++" -x hip -nogpuinc -nogpulib -I"$SRC/test/inputs" --offload-arch="$T" \
      --cuda-device-only --no-gpu-bundle-output -O2 "$WORK/$CASE.hip" -o "$CO"
    ENTRIES+=("bench#0:$T=$CO")
    BUNDLE_TARGETS+=",hipv4-amdgcn-amd-amdhsa--$T"
    BUNDLE_INPUTS+=" -input=$CO"
  done
  # shellcheck disable=SC2086
  "$LLVM/clang-offload-bundler" -type=o -bundle-align=4096 -targets="$BUNDLE_TARGETS" \
    $BUNDLE_INPUTS -output="$WORK/$CASE.bundle"
  "$BUILD/bin/kpack" pack -o "$WORK/$CASE.kpack" "${ENTRIES[@]}" >/dev/null

  "$LLVM/clang" -O2 -DBENCH_FAT "-DBENCH_BUNDLE=\"$WORK/$CASE.bundle\"" \
    "$HERE/registration_bench.c" "$WORK/libnoop.so" -Wl,-rpath,"$WORK" -o "$WORK/$CASE-fat"
  "$LLVM/clang" -O2 '-DKPACK_NAME="bench"' "-DKPACK_SEARCH_PATH=\"$CASE.kpack\"" \
    "$HERE/registration_bench.c" "$WORK/libnoop.so" -Wl,-rpath,"$WORK" -o "$WORK/$CASE-hipk"

  for I in $(seq "$RUNS"); do "$WORK/$CASE-fat"; done > "$WORK/$CASE-fat.txt"
  for I in $(seq "$RUNS"); do
    LD_PRELOAD="$BUILD/lib/librocm_kpack_hip.so" ROCM_KPACK_ARCH_OVERRIDE=$AGENT "$WORK/$CASE-hipk"
  done > "$WORK/$CASE-hipk.txt"

  size() { stat -c %s "$1" | awk '{ printf "%.1f KiB", $1 / 1024 }'; }
  printf '| %s | %s | %s | %s | %s µs | %s µs | %s µs | %s µs |\n' "$CASE" \
    "$(size "$WORK/$CASE.gfx1100.co")" "$(size "$WORK/$CASE.bundle")" "$(size "$WORK/$CASE.kpack")" \
    "$(cut -d' ' -f1 "$WORK/$CASE-fat.txt" | median)" "$(cut -d' ' -f1 "$WORK/$CASE-hipk.txt" | median)" \
    "$(cut -d' ' -f2 "$WORK/$CASE-fat.txt" | median)" "$(cut -d' ' -f2 "$WORK/$CASE-hipk.txt" | median)"
done
