#!/usr/bin/env bash
# Registration cost per binary: HIPF (fat, bundle in the image) vs HIPK through
# librocm_kpack_hip.so, for a small and a large device-code payload, both
# holding the same four targets; then dlopen of Debian's librocsparse fat vs
# converted behind the shim (lazy and eager), and the lazy bundles' first-touch
# latency per code object against its decompression time. Prints Markdown
# tables (docs/benchmarks.md).
#   bench/shim/run.sh <build-dir> [processes per case, default 15] [all|rocsparse]
set -euo pipefail
BUILD=$(realpath "$1")
RUNS=${2:-15}
SECTIONS=${3:-all}
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

if [ "$SECTIONS" = all ]; then
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
fi

# A librocsparse-sized binary: Debian's librocsparse.so.0.1 (111 wrappers,
# 777 code objects) fat, and converted with kpack-convert (per-target
# archives) behind the shim, lazy (default) and eager (ROCM_KPACK_SHIM_EAGER).
# The registration calls go to libnoop.so (linked into the benchmark, so it
# comes before the library's own dependencies in the global scope): it stores
# the pointer and reads nothing, as a deferred-loading CLR does, so the numbers
# are the dlopen + registration cost alone. The stand-in in place of
# libamdhip64.so.5 only satisfies librocsparse's other HIP symbols.
ROCSPARSE=/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
RS_AGENT=gfx1030 # a target librocsparse carries
if [ -f "$ROCSPARSE" ] && [ -d "$BUILD/lib/hip-standin-as-amdhip64" ]; then
  "$LLVM/clang" -O2 "$HERE/dlopen_bench.c" "$WORK/libnoop.so" -Wl,-rpath,"$WORK" \
    -o "$WORK/dlopen_bench"
  mkdir -p "$WORK/rocsparse"
  "$BUILD/bin/kpack-convert" "$ROCSPARSE" -o "$WORK/rocsparse/librocsparse.so.0.1" \
    --kpack-dir="$WORK/rocsparse/.kpack" --quiet
  cat "$ROCSPARSE" "$WORK"/rocsparse/.kpack/* > /dev/null # warm the page cache
  RT="LD_LIBRARY_PATH=$BUILD/lib/hip-standin-as-amdhip64 HIP_STANDIN_AGENTS=$RS_AGENT"
  SHIM="LD_PRELOAD=$BUILD/lib/librocm_kpack_hip.so ROCM_KPACK_ARCH_OVERRIDE=$RS_AGENT"
  for I in $(seq "$RUNS"); do
    env $RT "$WORK/dlopen_bench" "$ROCSPARSE"
  done > "$WORK/rocsparse-fat.txt"
  for I in $(seq "$RUNS"); do
    env $RT $SHIM "$WORK/dlopen_bench" "$WORK/rocsparse/librocsparse.so.0.1"
  done > "$WORK/rocsparse-lazy.txt"
  for I in $(seq "$RUNS"); do
    env $RT $SHIM ROCM_KPACK_SHIM_EAGER=1 "$WORK/dlopen_bench" "$WORK/rocsparse/librocsparse.so.0.1"
  done > "$WORK/rocsparse-eager.txt"
  # The floor of the eager mode: decompressing the same 111 code objects.
  "$LLVM/clang" -O2 -I"$SRC/runtime/include" -I"$SRC/core/include" "$HERE/decompress_bench.c" \
    -L"$BUILD/lib" -lrocm_kpack -Wl,-rpath,"$BUILD/lib" -o "$WORK/decompress_bench"
  ARCHIVE="$WORK/rocsparse/.kpack/librocsparse.so.0.1_$RS_AGENT.kpack"
  for I in $(seq "$RUNS"); do
    "$WORK/decompress_bench" "$ARCHIVE" "$RS_AGENT"
  done > "$WORK/rocsparse-decompress.txt"
  echo
  echo "| librocsparse.so.0.1 (111 wrappers), agent $RS_AGENT, median of $RUNS runs | fat | converted + shim, lazy | converted + shim, eager | decompressing its $(awk '{print int($2 / 1048576)}' "$WORK/rocsparse-decompress.txt" | head -1) MiB of $RS_AGENT code objects alone |"
  echo "|---|---|---|---|---|"
  printf '| dlopen + 111 registrations | %s ms | %s ms | %s ms | %s ms |\n' \
    "$(median < "$WORK/rocsparse-fat.txt")" "$(median < "$WORK/rocsparse-lazy.txt")" \
    "$(median < "$WORK/rocsparse-eager.txt")" \
    "$(cut -d' ' -f1 "$WORK/rocsparse-decompress.txt" | median)"

  # First touch of each lazy code object vs decompressing it alone; libnoop
  # as the runtime behind the shim lists the bundles it was handed.
  "$LLVM/clang" -O2 -I"$SRC/runtime/include" -I"$SRC/core/include" "$HERE/first_touch_bench.c" "$WORK/libnoop.so" \
    -L"$BUILD/lib" -lrocm_kpack -Wl,-rpath,"$BUILD/lib" -Wl,-rpath,"$WORK" -o "$WORK/first_touch_bench"
  FT_RUNS=3
  echo
  echo "| lazy code objects ($RS_AGENT), $FT_RUNS runs | count | median size | first touch, median | decompression alone, median (reused / fresh memory) | first touch − decompression: median (reused / fresh) | over 1 ms (reused / fresh) | max over (reused / fresh) | largest code object: size, first touch, decompression reused / fresh (medians) |"
  echo "|---|---|---|---|---|---|---|---|---|"
  # Back to back (the worst case: the next fault arrives as soon as the last
  # is served), and 5 ms apart (first launches spread over a run; the shim
  # prepares staging memory in between).
  for GAP in 0 5; do
    for I in $(seq "$FT_RUNS"); do
      env $RT $SHIM GAP_MS=$GAP \
        "$WORK/first_touch_bench" "$WORK/rocsparse/librocsparse.so.0.1" "$ARCHIVE" "$RS_AGENT" |
        grep -v '^dlopen'
    done > "$WORK/first-touch.txt"
    COUNT=$(wc -l < "$WORK/first-touch.txt")
    LARGEST=$(sort -g "$WORK/first-touch.txt" | tail -1 | cut -d' ' -f1)
    over() { awk -v C="$1" '{printf "%.3f\n", $2 - $C}' "$WORK/first-touch.txt"; }
    printf '| librocsparse.so.0.1, touches %s | %s | %s KiB | %s ms | %s / %s ms | %s / %s ms | %s / %s | %s / %s ms | %s KiB, %s ms, %s / %s ms |\n' \
      "$([ "$GAP" = 0 ] && echo "back to back" || echo "$GAP ms apart")" \
      "$((COUNT / FT_RUNS))" \
      "$(cut -d' ' -f1 "$WORK/first-touch.txt" | median | awk '{printf "%.0f", $1 / 1024}')" \
      "$(cut -d' ' -f2 "$WORK/first-touch.txt" | median)" \
      "$(cut -d' ' -f3 "$WORK/first-touch.txt" | median)" \
      "$(cut -d' ' -f4 "$WORK/first-touch.txt" | median)" \
      "$(over 3 | median)" "$(over 4 | median)" \
      "$(over 3 | awk '$1 > 1 {n++} END {printf "%.0f %%", 100 * n / NR}')" \
      "$(over 4 | awk '$1 > 1 {n++} END {printf "%.0f %%", 100 * n / NR}')" \
      "$(over 3 | sort -g | tail -1)" "$(over 4 | sort -g | tail -1)" \
      "$((LARGEST / 1024))" \
      "$(awk -v L="$LARGEST" '$1 == L {print $2}' "$WORK/first-touch.txt" | median)" \
      "$(awk -v L="$LARGEST" '$1 == L {print $3}' "$WORK/first-touch.txt" | median)" \
      "$(awk -v L="$LARGEST" '$1 == L {print $4}' "$WORK/first-touch.txt" | median)"
  done
fi
