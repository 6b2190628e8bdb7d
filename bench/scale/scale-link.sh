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
# Each TU instantiates templated kernels over 4 element types and 4 tile
# sizes (real code, unrolled loops). All TUs are compiled once (kept in
# WORK_DIR/<driver>-<N>; a second run reuses them) and each fat object is also
# rewritten into its kpack-ready form (kpack-ready rewrite: what the kpack
# plugin emits, from the same compile); then each round links libscale.so fat
# (-fuse-ld=lld), emitted from the fat objects (ld.kpack --kpack-dir) and
# emitted from the kpack-ready objects, each under /usr/bin/time, and prints
# one line per link
#   <fat|kpack|ready> round R: wall W s user U s sys S s peak RSS M KB out B bytes archives A
# and finally links an executable against each library and runs it on the
# stand-in HIP runtime for every target. Log-log slopes over N: run it for
# several N and fit log(wall) against log(N).
# Example: nice -n 10 bench/scale/scale-link.sh build /tmp/kpack-scale 100
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
dir=$work/$driver-$n
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
archs=()
IFS=, read -ra list <<< "$targets"
for t in "${list[@]}"; do archs+=("--offload-arch=$t"); done
hip=(-x hip -nogpuinc -nogpulib -I"$src/test/inputs" -O2 -fPIC "${drv[@]}" "${archs[@]}")

# The sources (rewritten only when they change, so objects are reused).
put() { if ! cmp -s "$1.new" "$1"; then mv "$1.new" "$1"; else rm "$1.new"; fi; }
for i in $(seq 0 $((n - 1))); do
  cat > "$dir/tu$i.hip.new" <<EOT
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
  put "$dir/tu$i.hip"
done
{
  for i in $(seq 0 $((n - 1))); do echo "void launch_$i();"; done
  echo 'int main() {'
  for i in $(seq 0 $((n - 1))); do echo "  launch_$i();"; done
  echo '  return 0;'
  echo '}'
} > "$dir/main.cpp.new"
put "$dir/main.cpp"

cd "$dir"
start=$(date +%s)
for i in $(seq 0 $((n - 1))); do
  if [ ! -s "tu$i.o" ] || [ "tu$i.hip" -nt "tu$i.o" ]; then
    echo "tu$i.o"
  fi
done | xargs -r -P "$(nproc)" -I{} sh -c '"$0" "$@" -c "$(basename {} .o).hip" -o {}' "$clangxx" "${hip[@]}"
echo "compiled $n TUs for ${#list[@]} targets ($driver driver) in $(( $(date +%s) - start )) s"
objs=()
for i in $(seq 0 $((n - 1))); do objs+=("tu$i.o"); done
echo "device code in objects: $(du -cb "${objs[@]}" | tail -1 | cut -f1) bytes"
ready=()
for i in $(seq 0 $((n - 1))); do
  if [ ! -s "ready$i.o" ] || [ "tu$i.o" -nt "ready$i.o" ]; then
    "$build/bin/kpack-ready" rewrite "tu$i.o" -o "ready$i.o"
  fi
  ready+=("ready$i.o")
done

fmt="wall %e s user %U s sys %S s peak RSS %M KB"
common=(-shared "${drv[@]}" "${objs[@]}" "$build/lib/libhip_standin.so")
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
