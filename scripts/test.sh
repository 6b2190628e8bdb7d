#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): installs what is missing,
# builds, runs the unit tests (ctest) and the lit suite, then the runtime and
# format core again under ASan+UBSan and TSan, and the fuzzers for a bounded
# time. Ends with one line "total: N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
bash scripts/install-deps.sh || exit 1

passed=0; failed=0; skipped=0
count_ctest() { # $1 = log
  local line; line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$1" | tail -1)
  [ -n "$line" ] || { failed=$((failed + 1)); return; }
  local total f; total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  f=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")
  passed=$((passed + total - f)); failed=$((failed + f))
}
count_lit() { # $1 = log
  local p f u x
  # lit's summary lines look like "  Passed     : 12 (80.00%)".
  sum() { grep -E "^ *($1) *: *[0-9]+" "$2" | awk -F: '{split($2, a, " "); s += a[1]} END {print s + 0}'; }
  p=$(sum 'Passed' "$1"); f=$(sum 'Failed|Unresolved|Timed Out|Unexpectedly Passed' "$1")
  u=$(sum 'Unsupported|Expectedly Failed|Skipped|Excluded' "$1")
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${u:-0}))
  grep -q 'Total Discovered Tests' "$1" || failed=$((failed + 1))
}
step() { echo; echo "=== $* ==="; }
LOGS=$ROOT/build/test-logs; mkdir -p "$LOGS"

step "build (RelWithDebInfo)"
if ! BUILD_DIR=build bash scripts/build.sh; then echo "error: build failed"; echo "total: 0 passed, 1 failed"; exit 1; fi

step "unit tests"
(cd build && ctest --output-on-failure -j2 --timeout 300) 2>&1 | tee "$LOGS/ctest.log"; count_ctest "$LOGS/ctest.log"

step "lit suite"
/usr/lib/llvm-22/bin/lit -sv -j2 --timeout 900 --param kpack_long=1 build/test/lit 2>&1 | tee "$LOGS/lit.log"; count_lit "$LOGS/lit.log"

step "runtime + format core under ASan+UBSan"
if BUILD_DIR=build-asan bash scripts/build.sh -DKPACK_BUILD_TOOLS=OFF -DKPACK_SANITIZE=address,undefined -DKPACK_BUILD_FUZZERS=ON; then
  (cd build-asan && ctest --output-on-failure -j2 --timeout 600) 2>&1 | tee "$LOGS/ctest-asan.log"; count_ctest "$LOGS/ctest-asan.log"
else failed=$((failed + 1)); fi

step "runtime under TSan"
if BUILD_DIR=build-tsan bash scripts/build.sh -DKPACK_BUILD_TOOLS=OFF -DKPACK_SANITIZE=thread; then
  (cd build-tsan && ctest --output-on-failure -j2 --timeout 600 -R 'Concurren|Thread|Parallel') 2>&1 | tee "$LOGS/ctest-tsan.log"; count_ctest "$LOGS/ctest-tsan.log"
else failed=$((failed + 1)); fi

echo
echo "total: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
