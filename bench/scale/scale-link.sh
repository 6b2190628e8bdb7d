#!/bin/bash
# Issue 20 §1: link time, CPU and peak RSS of a HIP shared library of N TUs,
# fat with lld against emitted with ld.kpack.
#
# usage: bench/scale/scale-link.sh BUILD_DIR WORK_DIR N [ROUNDS [DRIVER]]
#   N       TUs (issue: 100, 300, 1000)
#   ROUNDS  alternating fat / ld.kpack link rounds (3)
#   DRIVER  new (--offload-new-driver, TheRock's default; the default here)
#           | old (clang's default offload driver)
#   TARGETS (environment) comma-separated offload archs, >= 6 by default:
#           gfx90a:xnack+,gfx11-generic,gfx942,gfx1030,gfx1100,gfx1201
#   GEN     (environment) the TU generator:
#           chain (default) bench/scale/gen-chain-tu.py: per TU, KERNELS
#                 (default 16) kernel templates instantiated for float and
#                 double, each a straight-line chain of STEPS (default 150)
#                 arithmetic steps with per-TU seeded constants and operations;
#                 compiled -O1. About 160-210 KB of device code per TU and
#                 target at about 400 KB per compile CPU-second.
#           tile  the first generator: templated kernels over 4 element types
#                 and 4 tile sizes (unrolled loops), compiled -O2; about
#                 150-170 KB per TU and target at about 75 KB per CPU-second.
#   OPT     (environment) overrides the optimization level (-O1 / -O2).
#   MODE    (environment) links (default: as below) | incremental: issue 29
#           §2, the frame cache (--kpack-cache-dir). Each round: the fat lld
#           link; ld.kpack without a cache; ld.kpack with a fresh, empty
#           cache (cold; its archives compared with cmp to those without);
#           then one TU edited (a variant of TU 0 with an extra kernel,
#           compiled once before the rounds, new to each round's cache) and
#           ld.kpack relinked with the warm cache. One line per link:
#             <fat|nocache|cold|warm> round R: wall W s user U s sys S s peak RSS M KB
# The TUs are compiled once into WORK_DIR/<driver>-<gen>-tus, shared by every
# N (TU i is the same for every N: a run for N = 1000 after one for N = 300
# compiles only TUs 300-999); each fat object is also rewritten into its
# kpack-ready form (kpack-ready rewrite: what the kpack plugin emits, from the
# same compile). The links are done in WORK_DIR/<driver>-<gen>-<N>: each round
# links libscale.so fat (-fuse-ld=lld), emitted from the fat objects (ld.kpack
# --kpack-dir) and emitted from the kpack-ready objects, each under
# /usr/bin/time, and prints one line per link
#   <fat|kpack|ready> round R: wall W s user U s sys S s peak RSS M KB out B bytes archives A
# then times `kpack convert` of the fat library and zstd -3 (one thread) over
# the objects (the compression CPU of the issue's target), checks that the
# first and last TU's code objects hold every kernel for every target, and
# finally links an executable against each library and runs it on the
# stand-in HIP runtime for every target. Log-log slopes over N: run it for
# several N and fit log(wall) against log(N).
# Example: nice -n 5 bench/scale/scale-link.sh build /tmp/kpack-scale 100
set -euo pipefail
build=$(cd "$1" && pwd) work=$2 n=$3 rounds=${4:-3} driver=${5:-new}
targets=${TARGETS:-gfx90a:xnack+,gfx11-generic,gfx942,gfx1030,gfx1100,gfx1201}
src=$(cd "$(dirname "$0")/../.." && pwd)
clangxx=${CLANGXX:-clang++-22}
for f in "$build/libexec/kpack/ld.lld" "$build/lib/libhip_standin.so" "$build/bin/kpack-ready"; do
  [ -e "$f" ] || { echo "scale-link.sh: $f not found: build the project first" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "scale-link.sh: /usr/bin/time (Debian package time) not found" >&2; exit 1; }
case $driver in
  new) drv=(--offload-new-driver) ;;
  old) drv=() ;;
  *) echo "scale-link.sh: DRIVER must be old or new" >&2; exit 1 ;;
esac
gen=${GEN:-chain}
case $gen in
  chain) opt=${OPT:--O1} ;;
  tile) opt=${OPT:--O2} ;;
  *) echo "scale-link.sh: GEN must be chain or tile" >&2; exit 1 ;;
esac
mkdir -p "$work/$driver-$gen-tus" "$work/$driver-$gen-$n"
tus=$(cd "$work/$driver-$gen-tus" && pwd)
dir=$(cd "$work/$driver-$gen-$n" && pwd)
archs=()
IFS=, read -ra list <<< "$targets"
for t in "${list[@]}"; do archs+=("--offload-arch=$t"); done
hip=(-x hip -nogpuinc -nogpulib -I"$src/test/inputs" "$opt" -fPIC "${drv[@]}" "${archs[@]}")

# The sources (rewritten only when they change, so objects are reused).
put() { if ! cmp -s "$1.new" "$1"; then mv "$1.new" "$1"; else rm "$1.new"; fi; }
if [ "$gen" = chain ]; then
  python3 "$src/bench/scale/gen-chain-tu.py" "$tus" "$n" ${KERNELS:-16} ${STEPS:-150}
  per_tu=$((2 * ${KERNELS:-16}))
else
  per_tu=16
  for i in $(seq 0 $((n - 1))); do
    cat > "$tus/tu$i.hip.new" <<EOT
#include "hip_min.h"
// TU $i: a tiled reduction-and-update kernel over 4 types x 4 tile sizes.
template <typename T, int Tile>
__global__ void tile_kernel_$i(const T *a, const T *b, T *c, int n) {
  unsigned x = __builtin_amdgcn_workitem_id_x();
  T acc[Tile];
#pragma unroll
  for (int k = 0; k < Tile; ++k)
    acc[k] = a[(x * Tile + k) % n] * T($((i % 7 + 1)));
  for (int j = 0; j < n; j += Tile) {
#pragma unroll
    for (int k = 0; k < Tile; ++k)
#pragma unroll
      for (int l = 0; l < Tile; ++l)
        acc[k] += a[(j + k) % n] * b[(j + l) % n] + T(l ^ k ^ $i);
  }
#pragma unroll
  for (int k = 0; k < Tile; ++k)
    c[(x * Tile + k) % n] = acc[k];
}
#define INST(T, S) template __global__ void tile_kernel_$i<T, S>(const T *, const T *, T *, int);
#define ALL(T) INST(T, 4) INST(T, 8) INST(T, 16) INST(T, 32)
ALL(float) ALL(double) ALL(int) ALL(short)
void launch_$i() { tile_kernel_$i<float, 8><<<1, 1>>>(nullptr, nullptr, nullptr, 1); }
EOT
    put "$tus/tu$i.hip"
  done
fi
{
  for i in $(seq 0 $((n - 1))); do echo "void launch_$i();"; done
  echo 'int main() {'
  for i in $(seq 0 $((n - 1))); do echo "  launch_$i();"; done
  echo '  return 0;'
  echo '}'
} > "$dir/main.cpp.new"
put "$dir/main.cpp"

cd "$tus"
for i in $(seq 0 $((n - 1))); do
  if [ ! -s "tu$i.o" ] || [ "tu$i.hip" -nt "tu$i.o" ]; then echo "tu$i.o"; fi
done > todo.txt
todo=$(wc -l < todo.txt)
/usr/bin/time -o compile-time.txt -f "wall %e s user %U s sys %S s" \
  xargs -a todo.txt -r -P "$(nproc)" -I{} sh -c '"$0" "$@" -c "$(basename {} .o).hip" -o {}.tmp && mv {}.tmp {}' \
  "$clangxx" "${hip[@]}"
echo "compiled $todo of $n TUs ($gen generator, $opt) for ${#list[@]} targets ($driver driver): $(cat compile-time.txt)"
objs=()
for i in $(seq 0 $((n - 1))); do objs+=("$tus/tu$i.o"); done
echo "objects: $(du -cb "${objs[@]}" | tail -1 | cut -f1) bytes"
for i in $(printf '%s\n' 0 $((n - 1)) | sort -un); do
  echo "tu$i.o device code per target: $("$build/bin/kpack" inspect "tu$i.o" | sed -n 's/^  target \([^ ]*\) size \([0-9]*\).*/\1 \2/p' | tr '\n' ' ')"
done
ready=()
for i in $(seq 0 $((n - 1))); do
  if [ ! -s "ready$i.o" ] || [ "tu$i.o" -nt "ready$i.o" ]; then
    "$build/bin/kpack-ready" rewrite "tu$i.o" -o "ready$i.o"
  fi
  ready+=("$tus/ready$i.o")
done
cd "$dir"

fmt="wall %e s user %U s sys %S s peak RSS %M KB"
common=(-shared "${drv[@]}" "${objs[@]}" "$build/lib/libhip_standin.so")
if [ "${MODE:-links}" = incremental ]; then
  kld=(-fuse-ld=lld --ld-path="$build/libexec/kpack/ld.lld")
  # The edit: TU 0 with one more kernel. Every round starts from an empty
  # cache, so its code objects are new to the cache in every round.
  { cat "$tus/tu0.hip"; echo "__global__ void bench_edit(float *p) { p[0] = 1.5f; }"; } > edit.hip.new
  put edit.hip
  [ -s edit.o ] && [ edit.o -nt edit.hip ] || "$clangxx" "${hip[@]}" -c edit.hip -o edit.o
  edited=("$dir/edit.o" "${objs[@]:1}")
  # link NAME OBJECTS... [ld.kpack options]: NAME/libscale.so, archives in NAME/kp.
  link() {
    local name=$1; shift
    rm -rf "$name" && mkdir "$name"
    /usr/bin/time -o time.txt -f "$fmt" "$clangxx" -shared "${drv[@]}" "$@" -o "$name/libscale.so"
  }
  for r in $(seq 1 "$rounds"); do
    link fat "${objs[@]}" "$build/lib/libhip_standin.so" -fuse-ld=lld
    echo "fat round $r: $(cat time.txt)"
    link nocache "${objs[@]}" "$build/lib/libhip_standin.so" "${kld[@]}" -Wl,--kpack-dir=nocache/kp
    echo "nocache round $r: $(cat time.txt)"
    rm -rf cache
    link cold "${objs[@]}" "$build/lib/libhip_standin.so" "${kld[@]}" -Wl,--kpack-dir=cold/kp -Wl,--kpack-cache-dir=cache
    echo "cold round $r: $(cat time.txt) cache $(du -sb cache | cut -f1) bytes"
    diff -r nocache cold
    link warm "${edited[@]}" "$build/lib/libhip_standin.so" "${kld[@]}" -Wl,--kpack-dir=warm/kp -Wl,--kpack-cache-dir=cache
    echo "warm round $r (TU 0 edited): $(cat time.txt)"
  done
  # The warm relink's outputs equal those of a link without the cache.
  link edited "${edited[@]}" "$build/lib/libhip_standin.so" "${kld[@]}" -Wl,--kpack-dir=edited/kp
  diff -r edited warm
  echo "outputs byte-identical with and without the cache: yes"
  exit 0
fi
for r in $(seq 1 "$rounds"); do
  rm -f libfat.so
  /usr/bin/time -o time.txt -f "$fmt" "$clangxx" "${common[@]}" -fuse-ld=lld -o libfat.so
  echo "fat round $r: $(cat time.txt) out $(stat -c %s libfat.so) bytes archives 0"
  rm -rf kp libscale.so
  /usr/bin/time -o time.txt -f "$fmt" "$clangxx" "${common[@]}" -fuse-ld=lld \
    --ld-path="$build/libexec/kpack/ld.lld" -Wl,--kpack-dir=kp -o libscale.so
  echo "kpack round $r: $(cat time.txt) out $(stat -c %s libscale.so) bytes archives $(ls kp | wc -l) ($(du -cb kp/* | tail -1 | cut -f1) bytes)"
  rm -rf kr libready.so
  /usr/bin/time -o time.txt -f "$fmt" "$clangxx" -shared "${drv[@]}" "${ready[@]}" \
    "$build/lib/libhip_standin.so" -fuse-ld=lld --ld-path="$build/libexec/kpack/ld.lld" \
    -Wl,--kpack-dir=kr -o libready.so
  echo "ready round $r: $(cat time.txt) out $(stat -c %s libready.so) bytes archives $(ls kr | wc -l) ($(du -cb kr/* | tail -1 | cut -f1) bytes)"
done
/usr/bin/time -o time.txt -f "$fmt" "$build/bin/kpack" convert libfat.so -o libconv.so --kpack-dir=conv > /dev/null 2>&1 \
  && echo "kpack convert of the fat library: $(cat time.txt)" \
  || echo "kpack convert of the fat library: see 'kpack convert --help' (not run)"

# The compression CPU of the issue's target: zstd -3 on one thread over the
# objects (device code is nearly all of their bytes).
/usr/bin/time -o time.txt -f "$fmt" sh -c 'cat "$@" | zstd -3 -T1 -q -c > /dev/null' sh "${objs[@]}"
echo "zstd -3 -T1 of the objects: $(cat time.txt)"

# The first and last TU's code objects hold every kernel (the .kd symbols).
for i in $(printf '%s\n' 0 $((n - 1)) | sort -un); do
  rm -rf "co$i" && mkdir "co$i"
  "$build/bin/kpack" unbundle "$tus/tu$i.o" --output-dir="co$i" > /dev/null
  for co in "co$i"/*; do
    kds=$(llvm-readelf-22 --syms "$co" | grep -o '[^ ]*\.kd$' | sort -u | wc -l)
    text=$(llvm-readelf-22 -S --wide "$co" | awk '{for (f = 1; f < NF; f++) if ($f == ".text") print $(f + 4)}')
    echo "tu$i.o $(basename "$co"): $kds kernels (expected $per_tu), .text $((16#$text)) bytes"
  done
done

# The program on the stand-in, for every target.
"$clangxx" main.cpp -fuse-ld=lld -L. -lfat "$build/lib/libhip_standin.so" -Wl,-rpath,"$dir" -Wl,-rpath,"$build/lib" -o app-fat
"$clangxx" main.cpp -fuse-ld=lld -L. -lscale "$build/lib/libhip_standin.so" -Wl,-rpath,"$dir" -Wl,-rpath,"$build/lib" -o app-kpack
"$clangxx" main.cpp -fuse-ld=lld -L. -lready "$build/lib/libhip_standin.so" -Wl,-rpath,"$dir" -Wl,-rpath,"$build/lib" -o app-ready
for t in "${list[@]}"; do
  agent=$t
  [ "$t" = gfx11-generic ] && agent=gfx1100
  for app in app-fat app-kpack app-ready; do
    HIP_STANDIN_LOG=1 HIP_STANDIN_AGENTS=$agent LD_LIBRARY_PATH="$build/lib" "./$app" 2>&1 \
      | grep "resolved on" | sed "s/^/$app $agent: /"
  done
done
