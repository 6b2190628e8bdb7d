#!/bin/bash
# Issue 20 §2: device code past 2 GiB in one link.
#
# usage: bench/scale/big-device-code.sh BUILD_DIR WORK_DIR [TUS [MIB [TARGETS]]]
#   BUILD_DIR  a kpack build (ld.kpack, libexec/kpack/ld.lld, the stand-in)
#   WORK_DIR   scratch directory (big: TUS * MIB * #targets of objects; put
#              it under /tmp and delete it afterwards)
#   TUS        TUs, each with one initialized MIB-MiB __device__ array (3)
#   MIB        (400)
#   TARGETS    comma-separated offload archs (gfx90a:xnack+,gfx11-generic)
# Compiles the TUs once (kept in WORK_DIR: a second run reuses them), then
#   1. links them fat with lld: past 2 GiB it fails with
#      "relocation R_X86_64_PC32 out of range" (lld places .hip_fatbin
#      between .rodata and .text); the section layout is shown from a
#      --noinhibit-exec link;
#   2. links them with ld.kpack --kpack-dir, under /usr/bin/time;
#   3. runs the program on the stand-in HIP runtime for every target.
# Prints wall/user/sys seconds and peak RSS of each link. Example (the
# figures of docs/benchmarks.md, "Device code past 2 GiB"):
#   nice -n 10 bench/scale/big-device-code.sh build /tmp/kpack-big 3 400
set -euo pipefail
build=$(cd "$1" && pwd) work=$2 tus=${3:-3} mib=${4:-400}
targets=${5:-gfx90a:xnack+,gfx11-generic}
src=$(cd "$(dirname "$0")/../.." && pwd)
for f in "$build/libexec/kpack/ld.lld" "$build/lib/libhip_standin.so"; do
  [ -e "$f" ] || { echo "big-device-code.sh: $f not found: build the project first" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "big-device-code.sh: /usr/bin/time (Debian package time) not found" >&2; exit 1; }
clangxx=${CLANGXX:-clang++-22}
readelf=${READELF:-llvm-readelf-22}
mkdir -p "$work"
work=$(cd "$work" && pwd)
bash "$src/test/lit/linker/Inputs/gen-big-device.sh" "$work" "$tus" "$mib"
archs=()
IFS=, read -ra list <<< "$targets"
for t in "${list[@]}"; do archs+=("--offload-arch=$t"); done
hip=(-x hip -nogpuinc -nogpulib -I"$src/test/inputs")
cd "$work"
objs=()
for i in $(seq 0 $((tus - 1))) main; do
  n=big$i; [ "$i" = main ] && n=main
  if [ ! -s "$n.o" ] || [ "$n.hip" -nt "$n.o" ]; then
    /usr/bin/time -f "compile $n: %e s" "$clangxx" "${hip[@]}" "${archs[@]}" -c "$n.hip" -o "$n.o"
  fi
  objs+=("$n.o")
done
echo "device code: $(du -cb big*.o | tail -1 | cut -f1) bytes of objects"
fmt="wall %e s user %U s sys %S s peak RSS %M KB"
echo "== fat link (lld)"
/usr/bin/time -f "fat: $fmt" "$clangxx" "${objs[@]}" "$build/lib/libhip_standin.so" \
  -Wl,-rpath,"$build/lib" -fuse-ld=lld -o fat 2> fat.log || true
grep -m2 -E "error|fat:" fat.log || true
grep "fat:" fat.log
echo "== fat layout (--noinhibit-exec)"
"$clangxx" "${objs[@]}" "$build/lib/libhip_standin.so" -Wl,-rpath,"$build/lib" \
  -fuse-ld=lld -Wl,--noinhibit-exec -o fat-layout > /dev/null 2>&1 || true
[ -e fat-layout ] && "$readelf" -S -W fat-layout | grep -E " \.(rodata|hip_fatbin|text) "
rm -f fat-layout fat
echo "== ld.kpack"
rm -rf kp kpack
/usr/bin/time -f "ld.kpack: $fmt" "$clangxx" "${objs[@]}" "$build/lib/libhip_standin.so" \
  -Wl,-rpath,"$build/lib" -fuse-ld=lld --ld-path="$build/libexec/kpack/ld.lld" \
  -Wl,--kpack-dir=kp -o kpack
"$readelf" -S -W kpack | grep -c hip_fatbin | sed 's/^/.hip_fatbin sections in the output: /' || true
ls -l kp
for t in "${list[@]}"; do
  agent=$t
  [ "$t" = gfx11-generic ] && agent=gfx1100
  HIP_STANDIN_LOG=1 HIP_STANDIN_AGENTS=$agent ./kpack 2>&1 | grep "resolved on" | sed "s/^/$agent: /"
done
