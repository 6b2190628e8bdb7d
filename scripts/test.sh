#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): installs what is missing,
# builds with warnings as errors, runs the unit tests (ctest), builds the
# runtime as rocm_kpack.dll with the stand-in amdhip64.dll (mingw-w64) and
# runs its tests and HIP programs under wine64, then builds everything
# again under ASan+UBSan and runs the unit tests, the fuzzers for a bounded
# time and the whole lit suite with the instrumented tools (whose
# test/lit/windows runs converted programs on the DLLs), then the lit tests
# the instrumented run leaves out (the long ones) with the plain tools, the
# runtime and format core under TSan, each sanitizer build followed by the
# shim's lit tests against that build's shim and stand-in, and the runtime
# and format core built with GCC 12. Ends with one line "total: N passed, N
# failed, N skipped" that counts every step: a build that fails and a test
# step whose log has no summary count as failures; tests ctest reports as
# not run (GTEST_SKIP) and lit's Unsupported/Skipped tests count as
# skipped, never as passed (docs/testing.md).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
if ! bash scripts/install-deps.sh; then echo "total: 0 passed, 1 failed, 0 skipped"; exit 1; fi

passed=0; failed=0; skipped=0; start=$SECONDS
count_ctest() { # $1 = log
  local line total f s
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$1" | tail -1)
  if [ -z "$line" ]; then echo "error: no ctest summary in $1"; failed=$((failed + 1)); return; fi
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  f=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")
  # ctest counts skipped tests as passed; they are listed as "(Skipped)" or
  # "(Disabled)" under "The following tests did not run:".
  s=$(sed -n '/^The following tests did not run:/,/^$/p' "$1" | grep -cE '\((Skipped|Disabled)\)$')
  passed=$((passed + total - f - s)); failed=$((failed + f)); skipped=$((skipped + s))
}
count_lit() { # $1 = log
  local p f u
  # lit's summary lines look like "  Passed     : 12 (80.00%)".
  sum() { grep -E "^ *($1) *: *[0-9]+" "$2" | awk -F: '{split($2, a, " "); s += a[1]} END {print s + 0}'; }
  p=$(sum 'Passed' "$1"); f=$(sum 'Failed|Unresolved|Timed Out|Unexpectedly Passed' "$1")
  u=$(sum 'Unsupported|Expectedly Failed|Skipped|Excluded' "$1")
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + u))
  grep -q 'Total Discovered Tests' "$1" || { echo "error: no lit summary in $1"; failed=$((failed + 1)); }
}
step() { echo; echo "=== $* (at $((SECONDS - start)) s) ==="; }
# build <dir> <cmake args>...: counts a failed build as one failure.
build() {
  local dir=$1; shift
  BUILD_DIR=$dir bash scripts/build.sh -DKPACK_WERROR=ON "$@" && return 0
  echo "error: build of $dir failed"; failed=$((failed + 1)); return 1
}
LOGS=$ROOT/build/test-logs; mkdir -p "$LOGS"

# shim_lit <sanitizer build> <log name>: the shim's end-to-end lit tests with
# the programs, the shim and the stand-in of that build (instrumented), the
# tools from build/ (lit.cfg.py, kpack_sanitized_build).
shim_lit() {
  [ "$main_built" = 1 ] || return 0 # build/'s failure is counted already
  /usr/lib/llvm-22/bin/lit -sv -j2 --timeout 900 --param kpack_sanitized_build="$ROOT/$1" \
    build/test/lit/shim 2>&1 | tee "$LOGS/$2"; count_lit "$LOGS/$2"
}

main_built=0
step "build (clang-22, RelWithDebInfo, -Werror)"
if build build; then
  main_built=1
  step "unit tests"
  # (The fuzzers build and run in build-asan only.)
  (cd build && ctest --output-on-failure -j2 --timeout 300) 2>&1 | tee "$LOGS/ctest.log"; count_ctest "$LOGS/ctest.log"
fi

# The runtime as rocm_kpack.dll (mingw-w64), its unit tests under wine64
# (docs/runtime.md, "Windows"); a missing mingw-w64 or wine64 fails. Before
# the lit suite: test/lit/windows runs converted programs on this build's
# rocm_kpack.dll and stand-in amdhip64.dll (build/'s KPACK_WINDOWS_BUILD_DIR).
step "Windows runtime (mingw-w64, -Werror) and its unit tests under wine64"
BUILD_DIR=build-windows bash cmake/windows/run-tests.sh 2>&1 | tee "$LOGS/windows.log"
line=$(grep -E '^windows: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$LOGS/windows.log" | tail -1)
if [ -z "$line" ]; then
  echo "error: no summary in $LOGS/windows.log"; failed=$((failed + 1))
else
  read -r wp wf ws < <(sed -E 's/windows: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")
  passed=$((passed + wp)); failed=$((failed + wf)); skipped=$((skipped + ws))
fi

# Everything under ASan+UBSan, the tools included: every path a user runs
# (kpack, ld.kpack, hipcc, kpack-ready, kpack-offload-wrapper) runs
# instrumented in the lit suite (docs/testing.md).
# Line tables only in the sanitizer builds: their reports name functions,
# files and lines; full debug info cost a tenth of their compile time.
san_debug=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG"
           -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG")
asan_lit=0
step "everything under ASan+UBSan (tools, runtime, format core, fuzzers)"
if build build-asan -DKPACK_BUILD_TOOLS=ON -DKPACK_SANITIZE=address,undefined -DKPACK_BUILD_FUZZERS=ON "${san_debug[@]}"; then
  (cd build-asan && ctest --output-on-failure -j2 --timeout 600) 2>&1 | tee "$LOGS/ctest-asan.log"; count_ctest "$LOGS/ctest-asan.log"
  step "shim end to end under ASan+UBSan (lit test/lit/shim)"
  shim_lit build-asan lit-shim-asan.log
  if [ "$main_built" = 1 ]; then
    # The whole lit suite with the tools of build-asan, the libraries the
    # test programs load from build/ (lit.cfg.py, kpack_plain_libs), the
    # Windows DLLs of step 2. Without the `long` tests (librocsparse
    # throughput, several times slower instrumented): the next step runs
    # them with build/'s tools, and their code paths run here on small
    # inputs (docs/testing.md, "Time").
    step "lit suite with the tools under ASan+UBSan"
    /usr/lib/llvm-22/bin/lit -sv -j2 --timeout 900 \
      --param kpack_plain_libs="$ROOT/build" --param kpack_windows_build="$ROOT/build-windows" \
      build-asan/test/lit 2>&1 | tee "$LOGS/lit-asan.log"; count_lit "$LOGS/lit-asan.log"
    asan_lit=1
  fi
fi

# The lit suite with build/'s tools: the tests the instrumented run above
# leaves out, the `long` ones (`REQUIRES: long`) and those that cannot run
# with instrumented tools (`UNSUPPORTED: ... sanitized-tools`); every test
# when build-asan did not build. The rest ran here too before: a fifth of
# the whole command's time for code the instrumented run tests already
# (docs/testing.md, "Time").
if [ "$main_built" = 1 ]; then
  if [ "$asan_lit" = 1 ]; then
    step "lit suite with build/'s tools: the long tests and those instrumented tools cannot run"
    mapfile -t plain_tests < <(grep -rlE '^(# *)?(REQUIRES:.*\blong\b|UNSUPPORTED:.*\bsanitized-tools\b)' \
      --include='*.test' test/lit | sed 's|^test/lit/|build/test/lit/|' | sort)
  else
    step "lit suite with build/'s tools"
    plain_tests=(build/test/lit)
  fi
  /usr/lib/llvm-22/bin/lit -sv -j2 --timeout 900 --param kpack_long=1 "${plain_tests[@]}" 2>&1 | tee "$LOGS/lit.log"; count_lit "$LOGS/lit.log"
fi

step "runtime under TSan"
if build build-tsan -DKPACK_BUILD_TOOLS=OFF -DKPACK_SANITIZE=thread "${san_debug[@]}"; then
  # With the shim's lazy bundles (fork children start its threads anew).
  (cd build-tsan && TSAN_OPTIONS="die_after_fork=0 suppressions=$ROOT/test/tsan-suppressions.txt" ctest --output-on-failure -j2 --timeout 600 -R 'Concurren|Thread|Parallel|ShimLazyBundle|LoaderFork|LoaderFailureCache|SegmentCache') 2>&1 | tee "$LOGS/ctest-tsan.log"; count_ctest "$LOGS/ctest-tsan.log"
  step "shim end to end under TSan (lit test/lit/shim)"
  shim_lit build-tsan lit-shim-tsan.log
fi

# What CLR links (librocm_kpack) must build warning-free with the system
# compiler too.
step "runtime + format core with GCC 12 (-Werror)"
if build build-gcc-runtime -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ -DKPACK_BUILD_TOOLS=OFF; then
  (cd build-gcc-runtime && ctest --output-on-failure -j2 --timeout 300) 2>&1 | tee "$LOGS/ctest-gcc.log"; count_ctest "$LOGS/ctest-gcc.log"
fi

echo
echo "test time: $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s"
echo "total: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
