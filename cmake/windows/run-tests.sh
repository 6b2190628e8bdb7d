#!/usr/bin/env bash
# The Windows step of scripts/test.sh (docs/runtime.md, "Windows"): builds
# rocm_kpack.dll, its import library and the unit tests with mingw-w64
# (cmake/windows, -Werror) into BUILD_DIR (default build-windows) and runs
# every test executable under wine64. Nothing is skipped: a missing mingw-w64
# or wine64 is a failure naming the Debian package.
# Ends with "windows: N passed, N failed, N skipped" (gtest's counts; an
# executable that printed no summary, or a failed build, counts as failed).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD_DIR=${BUILD_DIR:-build-windows}
report() { echo "windows: $1 passed, $2 failed, $3 skipped"; }

missing=()
command -v x86_64-w64-mingw32-g++-posix >/dev/null || missing+=("x86_64-w64-mingw32-g++-posix (Debian package g++-mingw-w64-x86-64-posix, in mingw-w64)")
[ -x /usr/lib/wine/wine64 ] || missing+=("/usr/lib/wine/wine64 (Debian package wine64)")
command -v wineserver >/dev/null || missing+=("wineserver (Debian package wine)")
if [ ${#missing[@]} -gt 0 ]; then
  for m in "${missing[@]}"; do echo "error: missing $m"; done
  report 0 1 0; exit 1
fi
if [ ! -f /usr/local/src/zstd-1.5.4/lib/zstd.h ]; then
  echo "error: zstd sources missing in /usr/local/src/zstd-1.5.4 (scripts/install-deps.sh fetches Debian's libzstd source package)"; report 0 1 0; exit 1
fi

if ! cmake -S cmake/windows -B "$BUILD_DIR" -G Ninja \
       -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/windows/toolchain-mingw.cmake" \
       -DKPACK_WERROR=ON >/dev/null ||
   ! ninja -C "$BUILD_DIR" -j"${JOBS:-2}"; then
  echo "error: the Windows build failed"; report 0 1 0; exit 1
fi

# One wine prefix per build directory (creating one takes ~30 s; tests make
# their own temporary directories), kept alive by a persistent wineserver
# for the run.
# wine stores Windows (UTF-16) file names as Unix ones in the locale's
# character set: under the C locale (a fresh machine's, CI's) a name with
# non-ASCII characters cannot be created (WindowsRuntime.NonAsciiPaths).
export LC_ALL=C.UTF-8
export WINEDEBUG=-all WINEPREFIX="$ROOT/$BUILD_DIR/wineprefix" WINEDLLOVERRIDES="mscoree,mshtml="
export WINEPATH="Z:${ROOT//\//\\}\\$BUILD_DIR\\bin"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  /usr/lib/wine/wine64 wineboot -i >/dev/null 2>&1 || { echo "error: wineboot failed"; report 0 1 0; exit 1; }
fi
wineserver -p
trap 'wineserver -k 2>/dev/null' EXIT

passed=0; failed=0; skipped=0
LOGS=$ROOT/$BUILD_DIR/test-logs; mkdir -p "$LOGS"
for exe in "$BUILD_DIR"/bin/*Tests.exe; do
  name=$(basename "$exe" .exe)
  echo "--- $name (wine64)"
  (cd "$BUILD_DIR/bin" && timeout 900 /usr/lib/wine/wine64 "./$name.exe") > "$LOGS/$name.log" 2>&1
  rc=$?
  grep -E '^\[  (FAILED|SKIPPED) |^\[==========\]|: Failure$' "$LOGS/$name.log" | head -40
  p=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\..*/\1/p' "$LOGS/$name.log" | tail -1)
  f=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?, listed below.*/\1/p' "$LOGS/$name.log" | tail -1)
  s=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?, listed below.*/\1/p' "$LOGS/$name.log" | tail -1)
  if [ -z "$p" ]; then
    echo "error: $name printed no gtest summary (exit $rc); log: $LOGS/$name.log"
    tail -20 "$LOGS/$name.log"; failed=$((failed + 1)); continue
  fi
  f=${f:-0}; s=${s:-0}
  # gtest counts skipped tests among neither; a non-zero exit without a
  # failed test is one failure of its own.
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then echo "error: $name exited $rc"; f=1; fi
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
done
# Fat HIP programs built for Windows (clang-22, mingw-w64 target, both offload
# drivers, every target) run on the stand-in amdhip64.dll: each agent must
# get a code object in which every kernel and variable resolves (exit 0); an
# agent the bundle cannot serve must fail (exit 3). One result per run.
PROG=$ROOT/$BUILD_DIR/programs; mkdir -p "$PROG"
TARGETS=(gfx90a:xnack+ gfx942:sramecc+:xnack- gfx1100 gfx11-generic)
offload=(); for t in "${TARGETS[@]}"; do offload+=(--offload-arch="$t"); done
cp "$BUILD_DIR"/bin/*.dll "$PROG"/
# agent -> the code object CLR's rule picks for it
AGENTS=(gfx90a:xnack+ gfx942:sramecc+:xnack- gfx1100 gfx1101)
for driver in old new; do
  flag=--no-offload-new-driver; [ "$driver" = new ] && flag=--offload-new-driver
  exe=$PROG/saxpy-$driver.exe
  if ! clang++-22 --target=x86_64-w64-mingw32 -fuse-ld=lld -O1 -x hip $flag "${offload[@]}" \
         -nogpuinc -nogpulib -Itest/inputs cmake/windows/programs/saxpy.hip -x none \
         "$BUILD_DIR/lib/libamdhip64.dll.a" -static-libgcc -static-libstdc++ -o "$exe" \
         > "$LOGS/saxpy-$driver.build.log" 2>&1; then
    echo "error: building saxpy ($driver driver) failed:"; cat "$LOGS/saxpy-$driver.build.log"
    failed=$((failed + 1)); continue
  fi
  for agent in "${AGENTS[@]}" all gfx1030; do
    agents=$agent; expect=0
    [ "$agent" = all ] && agents=$(IFS=,; echo "${AGENTS[*]}")
    [ "$agent" = gfx1030 ] && expect=3
    (cd "$PROG" && HIP_STANDIN_AGENTS=$agents HIP_STANDIN_LOG=1 \
       timeout 300 /usr/lib/wine/wine64 "./saxpy-$driver.exe") > "$LOGS/saxpy-$driver-$agent.log" 2>&1
    rc=$?
    if [ "$rc" -eq "$expect" ] && { [ "$expect" -ne 0 ] || grep -q 'resolved on' "$LOGS/saxpy-$driver-$agent.log"; }; then
      echo "PASS: saxpy ($driver driver) on $agents (exit $rc)"; passed=$((passed + 1))
    else
      echo "FAIL: saxpy ($driver driver) on $agents: exit $rc, expected $expect"
      cat "$LOGS/saxpy-$driver-$agent.log"; failed=$((failed + 1))
    fi
  done
done

report "$passed" "$failed" "$skipped"
[ "$failed" -eq 0 ]
