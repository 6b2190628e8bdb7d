#!/usr/bin/env bash
# The README's demo: the bundled example examples/saxpy/saxpy.hip through the
# toolchain. Needs a build (scripts/build.sh); writes into ${BUILD_DIR}/demo.
#  1. a fat build with clang-22, inspected with `kpack inspect`;
#  2. its device code packed into an archive (`kpack pack`), listed, verified;
#  3. a code object loaded through librocm_kpack for a chosen GPU;
#  4. the same program built with `hipcc --emit-kpack`: host-only binary plus
#     archive, sizes against the fat build, run on the stand-in HIP runtime;
#  5. the fat binary converted after the fact (`kpack convert`), and run
#     through the registration shim that stock HIP runtimes need.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD_DIR:-build}
BIN=$ROOT/$BUILD/bin
LIB=$ROOT/$BUILD/lib
OUT=$ROOT/$BUILD/demo
ARCHS=(gfx90a:xnack+ gfx942:sramecc+:xnack- gfx1100 gfx11-generic)
[ -x "$BIN/kpack" ] || { echo "error: $BIN/kpack not found; run scripts/build.sh first" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT" && cd "$OUT"
if [ -t 1 ]; then say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }; else say() { printf '\n== %s\n' "$*"; }; fi
OFFLOAD=()
for a in "${ARCHS[@]}"; do OFFLOAD+=("--offload-arch=$a"); done
HIPFLAGS=(-nogpuinc -nogpulib -I"$ROOT/test/inputs" -O2 -cuid=saxpy)
# The stand-in HIP runtime (test/hip-standin): there is no AMD GPU here, so it
# does what CLR does at registration and checks that every kernel resolves.
RUNTIME=(-no-hip-rt -L"$LIB" -lhip_standin -Wl,-rpath,"$LIB")

say "1. fat build with clang-22 (${ARCHS[*]})"
"$BIN/hipcc" "${HIPFLAGS[@]}" "${OFFLOAD[@]}" "$ROOT/examples/saxpy/saxpy.hip" "${RUNTIME[@]}" -o saxpy-fat
"$BIN/kpack" inspect saxpy-fat

say "2. pack its device code into an archive, list and verify it"
"$BIN/kpack" pack --name saxpy -o saxpy.kpack saxpy-fat
"$BIN/kpack" ls saxpy.kpack
"$BIN/kpack" verify saxpy.kpack

say "3. load a code object through librocm_kpack for a gfx1101 GPU (-> gfx11-generic)"
"$BIN/kpack" convert saxpy-fat -o saxpy-converted --kpack-output=saxpy-converted.kpack --quiet
env ROCM_KPACK_DEBUG=1 HIP_STANDIN_AGENTS=gfx1101 HIP_STANDIN_LOG=1 ./saxpy-converted 2>&1 | grep -E 'kpack: (requested|archive|loaded)|hip-standin' || true

say "4. compiler-emitted kpack: hipcc --emit-kpack"
"$BIN/hipcc" "${HIPFLAGS[@]}" "${OFFLOAD[@]}" --emit-kpack=saxpy.emit.kpack "$ROOT/examples/saxpy/saxpy.hip" "${RUNTIME[@]}" -o saxpy
"$BIN/kpack" inspect saxpy
fat=$(stat -c %s saxpy-fat); host=$(stat -c %s saxpy); arch=$(stat -c %s saxpy.emit.kpack)
echo
printf '%-34s %10s bytes\n' "fat binary (saxpy-fat)" "$fat" "host-only binary (saxpy)" "$host" "archive (saxpy.emit.kpack)" "$arch"
for agent in "${ARCHS[@]}" gfx1101; do
  env HIP_STANDIN_AGENTS="$agent" HIP_STANDIN_LOG=1 ./saxpy 2>&1 | grep -E 'code object|resolved'
done

say "5. stock HIP runtimes: the registration shim turns HIPK into HIPF"
env LD_PRELOAD="$LIB/librocm_kpack_hip.so" ROCM_KPACK_DEBUG=1 ROCM_KPACK_ARCH_OVERRIDE=gfx942:sramecc+:xnack- \
  HIP_STANDIN_AGENTS=gfx942:sramecc+:xnack- HIP_STANDIN_LOG=1 ./saxpy-converted 2>&1 | grep -E 'rocm_kpack_hip|magic|resolved'
say "demo done: outputs in $OUT"
