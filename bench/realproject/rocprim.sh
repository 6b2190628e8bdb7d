#!/usr/bin/env bash
# Issue 20 §4: a real HIP project built fat and with kpack emission, with its
# own CMake and one added setting, and compared.
#
#   bench/realproject/rocprim.sh ROCPRIM_CHECKOUT BUILD_DIR WORK [TARGETS]
#
# ROCPRIM_CHECKOUT  a git work tree of ROCm/rocPRIM (the figures in
#                   docs/benchmarks.md are for tag rocm-5.3.3, the rocPRIM of
#                   Debian's ROCm 5.2/5.3 stack); never copied into this project
# BUILD_DIR         this project's build tree (KpackPlugin.so, ld.kpack, the
#                   stand-in, lib/cmake/rocm-kpack/KpackEmit.cmake)
# WORK              scratch directory (WORK/fat and WORK/emit are recreated)
# TARGETS           comma-separated offload targets, also the stand-in's agents
#                   (default gfx908,gfx90a:xnack+,gfx1030)
#
# Environment: TESTS (rocPRIM test programs, space-separated; default below),
# DRIVER (old: clang's default offload driver; new: --offload-new-driver),
# JOBS (ninja -j, default 2).
#
# What it does: configures rocPRIM twice with BUILD_TEST=ON and the same
# compiler and flags (clang++-22, AMDGPU_TARGETS=TARGETS); the emit build adds
# -DROCM_KPACK_EMIT=ON with CMAKE_PROJECT_INCLUDE naming this build tree's
# KpackEmit.cmake (rocPRIM knows nothing of kpack). Then, timed with the wall
# clock: the objects of TESTS fat, the objects emit, the links fat, the links
# emit (the per-program link times come from ninja's log). It reports each
# program's host binary size (and the fat one's .hip_fatbin), its archives
# (count, bytes), and runs every program of both builds with
# --gtest_list_tests on the stand-in acting as libamdhip64.so.5 with one
# simulated agent per target: the stand-in registers the program's device
# code, resolves it for every agent at exit and checks that every kernel and
# variable has its symbol (it executes no kernel, so rocPRIM's own tests are
# not run). Per program and target: the kernels resolved, or FAIL.
#
# Debian needs: libamdhip64-dev, rocm-device-libs (scripts/install-deps.sh),
# rocm-cmake (rocPRIM's CMake requires it, else it downloads it) and hipcc
# (Debian's hip-config.cmake refuses to load without /usr/bin/hipcc; the
# compiler used is still clang++-22). Debian's HIP 5.2 headers with clang 22
# need two forced includes: test/inputs/real-hip/wavefront.h
# (__AMDGCN_WAVEFRONT_SIZE) and bench/realproject/hip52-fp16-rcp.h
# (__llvm_amdgcn_rcp_f16/_2f16); the device libraries are named with
# --rocm-device-lib-path and -mcode-object-version=5 (docs/cmake.md), and
# their hip.bc is linked into device code (below).
set -euo pipefail

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: $0 ROCPRIM_CHECKOUT BUILD_DIR WORK [TARGETS]" >&2
  exit 2
fi
die() { echo "rocprim.sh: $*" >&2; exit 1; }
SRC=$(cd "$1" 2>/dev/null && pwd) || die "no directory $1"
BUILD=$(cd "$2" 2>/dev/null && pwd) || die "no directory $2"
mkdir -p "$3" || die "cannot create $3"
WORK=$(cd "$3" && pwd)
TARGETS=${4:-gfx908,gfx90a:xnack+,gfx1030}
TESTS=${TESTS:-test_device_transform test_device_reduce test_device_scan test_device_merge_sort test_block_reduce test_block_radix_sort}
DRIVER=${DRIVER:-old}
JOBS=${JOBS:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DEVICE_LIBS=${DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
READELF=${READELF:-/usr/lib/llvm-22/bin/llvm-readelf}

[ -f "$SRC/rocprim/include/rocprim/rocprim.hpp" ] && [ -f "$SRC/test/rocprim/CMakeLists.txt" ] ||
  die "$SRC is not a rocPRIM checkout (no rocprim/include/rocprim/rocprim.hpp, test/rocprim/CMakeLists.txt)"
for f in lib/KpackPlugin.so bin/ld.kpack lib/libhip_standin.so \
         lib/hip-standin-as-amdhip64/libamdhip64.so.5 lib/cmake/rocm-kpack/KpackEmit.cmake; do
  [ -e "$BUILD/$f" ] || die "$BUILD/$f missing (ninja -C $BUILD KpackPlugin ld.kpack hip_standin)"
done
[ -f /usr/share/rocm/cmake/ROCMConfig.cmake ] || die "rocm-cmake missing (apt-get install rocm-cmake)"
[ -x /usr/bin/hipcc ] || die "/usr/bin/hipcc missing: Debian's hip-config.cmake requires it (apt-get install hipcc)"
[ -d "$DEVICE_LIBS" ] || die "device libraries not found at $DEVICE_LIBS (rocm-device-libs)"
[ -x "$READELF" ] || die "$READELF missing"
command -v clang++-22 >/dev/null || die "clang++-22 missing"

FLAGS="--rocm-device-lib-path=$DEVICE_LIBS -mcode-object-version=5"
FLAGS+=" -include $ROOT/test/inputs/real-hip/wavefront.h -include $HERE/hip52-fp16-rcp.h"
# hip.bc defines __atomic_work_item_fence (__threadfence*, __syncthreads in the
# 5.2 headers); clang 22 no longer links it into device code. Linked as the
# ROCm 5.2 compiler did (-mlink-builtin-bitcode: only what is needed); -Xclang
# reaches the host compile too, which needs nothing from it but warns.
FLAGS+=" -Xclang -mlink-builtin-bitcode -Xclang $DEVICE_LIBS/hip.bc -Xarch_host -Wno-linker-warnings"
case "$DRIVER" in
  old) ;;
  new) FLAGS+=" --offload-new-driver" ;;
  *) die "DRIVER must be old or new" ;;
esac

COMMIT=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)
DESCRIBE=$(git -C "$SRC" describe --tags --always 2>/dev/null || echo unknown)
echo "rocPRIM $DESCRIBE ($COMMIT), targets $TARGETS, driver $DRIVER, -j$JOBS"
echo "tests: $TESTS"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

configure() { # variant extra-args...
  local v=$1; shift
  rm -rf "$WORK/$v"
  cmake -S "$SRC" -B "$WORK/$v" -G Ninja -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_TEST=ON "-DAMDGPU_TARGETS=${TARGETS//,/;}" \
    "-DCMAKE_CXX_FLAGS=$FLAGS" "$@" > "$WORK/$v.configure.log" 2>&1 ||
    die "configure $v failed: $WORK/$v.configure.log"
}
configure fat
configure emit -DROCM_KPACK_EMIT=ON "-DCMAKE_PROJECT_INCLUDE=$BUILD/lib/cmake/rocm-kpack/KpackEmit.cmake"
grep -q 'compiles no HIP' "$WORK/emit.configure.log" && die "KpackEmit left rocPRIM alone (compiles no HIP?)"

# The object files of the chosen programs (one per source; rocPRIM splits
# some tests into slices).
objects() { # variant
  local t
  for t in $TESTS; do
    ninja -C "$WORK/$1" -t targets all | sed -n "s|^\(test/rocprim/CMakeFiles/$t\.dir/[^:]*\.o\):.*|\1|p"
  done
}
declare -A WALL
timed() { # key variant targets...
  local key=$1 v=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  nice -n 10 ninja -C "$WORK/$v" -j"$JOBS" "$@" >> "$WORK/$v.build.log" 2>&1 ||
    die "build of $v failed: $WORK/$v.build.log"
  t1=$(date +%s.%N)
  WALL[$key]=$(echo "$t1 - $t0" | bc)
}
for v in fat emit; do
  : > "$WORK/$v.build.log"
  mapfile -t OBJS < <(objects $v)
  [ ${#OBJS[@]} -gt 0 ] || die "no objects for TESTS in $v"
  timed compile-$v $v "${OBJS[@]}"
done
for v in fat emit; do
  timed link-$v $v $TESTS
done

# Per-program link wall from ninja's log: start and end (ms) of the edge whose
# output is test/rocprim/<test> (the last entry wins).
link_ms() { # variant test
  awk -v o="test/rocprim/$2" '$4 == o { d = $2 - $1 } END { print d + 0 }' "$WORK/$1/.ninja_log"
}
sections() { # binary -> "name type address offset size ..." per section
  "$READELF" -S --wide "$1" | sed -n 's/^ *\[ *[0-9]*\] *//p'
}
fatbin_size() {
  local hex
  hex=$(sections "$1" | awk '$1 == ".hip_fatbin" { print $5 }')
  echo $((16#${hex:-0}))
}
has_section() { sections "$1" | awk -v s="$2" '$1 == s { f = 1 } END { exit !f }'; }

# The stand-in run: every registration resolved for every agent.
STANDIN_LIB=$BUILD/lib/hip-standin-as-amdhip64
standin() { # variant test -> one cell per target, plus the status
  local v=$1 t=$2 log=$WORK/$1.$2.standin.log rc=0
  env LD_LIBRARY_PATH="$STANDIN_LIB" HIP_STANDIN_AGENTS="$TARGETS" HIP_STANDIN_LOG=1 \
    "$WORK/$v/test/rocprim/$t" --gtest_list_tests > /dev/null 2> "$log" || rc=$?
  local a cells="" bad=0
  IFS=, read -ra AGENTS <<< "$TARGETS"
  for a in "${AGENTS[@]}"; do
    # lines: binary N magic M agent A -> code object C size S kernels k/K vars v/V
    local cell
    cell=$(awk -v a="$a" '
      $1 == "hip-standin:" && $6 == "agent" && $7 == a && $8 == "->" {
        split($15, k, "/"); split($17, w, "/"); n++
        if (k[1] != k[2] || w[1] != w[2]) bad++
        ks += k[1]; ws += w[1]; m = $5
      }
      END { if (!n || bad) print "FAIL"; else printf "%d kernels %s\n", ks, m }' "$log")
    [ "$cell" = FAIL ] && bad=1
    cells+="| $cell "
  done
  local summary
  summary=$(grep -E '^hip-standin: [0-9]+ binaries' "$log" || true)
  if [ $rc -ne 0 ] || grep -q 'hip-standin: error' "$log" || [ -z "$summary" ] ||
     [[ "$summary" == *"with errors" ]]; then bad=1; fi
  [ $bad -eq 0 ] && STATUS=ok || { STATUS="FAIL (exit $rc, $log)"; FAILED=1; }
  CELLS=$cells
  SUMMARY=${summary#hip-standin: }
}

FAILED=0
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '| phase | fat | emit |\n|---|---|---|\n'
printf '| compile (objects of TESTS, wall s) | %.1f | %.1f |\n' "${WALL[compile-fat]}" "${WALL[compile-emit]}"
printf '| link (TESTS, wall s) | %.1f | %.1f |\n' "${WALL[link-fat]}" "${WALL[link-emit]}"
echo
HDR="| program | build | link (ninja log, s) | host binary (B) | .hip_fatbin (B) | archives | archive bytes"
SEP="|---|---|---|---|---|---|---"
IFS=, read -ra AGENTS <<< "$TARGETS"
for a in "${AGENTS[@]}"; do HDR+=" | $a"; SEP+="|---"; done
echo "$HDR | stand-in |"
echo "$SEP|---|"
TOT_fat=0 TOT_emit=0 TOT_arch=0 TOT_fatbin=0
for t in $TESTS; do
  for v in fat emit; do
    bin=$WORK/$v/test/rocprim/$t
    [ -f "$bin" ] || die "$bin was not built"
    size=$(stat -c %s "$bin")
    fb=$(fatbin_size "$bin")
    ms=$(link_ms $v "$t")
    if [ $v = emit ]; then
      has_section "$bin" .rocm_kpack_ref || { echo "$t: emit build has no .rocm_kpack_ref" >&2; FAILED=1; }
      [ "$fb" -eq 0 ] || { echo "$t: emit build still has .hip_fatbin" >&2; FAILED=1; }
      shopt -s nullglob
      arch=("$WORK/emit/test/rocprim/.kpack/${t}_"*.kpack)
      shopt -u nullglob
      na=${#arch[@]}
      ab=0
      for f in "${arch[@]}"; do ab=$((ab + $(stat -c %s "$f"))); done
      TOT_emit=$((TOT_emit + size)); TOT_arch=$((TOT_arch + ab))
    else
      na=0 ab=0
      TOT_fat=$((TOT_fat + size)); TOT_fatbin=$((TOT_fatbin + fb))
    fi
    standin $v "$t"
    printf '| %s | %s | %.2f | %d | %d | %d | %d %s| %s (%s) |\n' "$t" "$v" \
      "$(echo "$ms / 1000" | bc -l)" "$size" "$fb" "$na" "$ab" "$CELLS" "$STATUS" "$SUMMARY"
  done
done
echo
echo "total host binaries: fat $TOT_fat B (.hip_fatbin $TOT_fatbin B), emit $TOT_emit B + archives $TOT_arch B"
if [ $FAILED -ne 0 ]; then
  echo "rocprim.sh: FAILED (see above)" >&2
  exit 1
fi
