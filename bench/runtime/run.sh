#!/bin/sh
# Builds and runs the librocm_kpack benchmark; prints Markdown tables.
#   bench/runtime/run.sh [build dir] [scratch dir]
# Needs ~1.5 GB free in the scratch dir (default /tmp); files are removed.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build-bench}
scratch=${2:-/tmp}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DKPACK_BUILD_TESTS=OFF -DKPACK_BUILD_TOOLS=OFF >/dev/null
fi
ninja -C "$build" kpack_runtime_bench >/dev/null
exec "$build/bin/kpack_runtime_bench" "$scratch"
