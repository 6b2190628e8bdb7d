#!/usr/bin/env bash
# Links kpack-writer-bench fully static, for a machine that has none of the
# project's libraries, LLVM or zstd (docs/benchmarks.md, "Writer on many
# cores"): the bench's source against the static libraries an ordinary build
# made (kpack_format, the runtime's reader, kpack_core) and Debian's static
# libLLVMSupport/libLLVMDemangle (llvm-22-dev), libzstd (libzstd-dev) and
# libz (zlib1g-dev); msgpack-cxx is header-only. Build BUILD_DIR first
# (`ninja -C BUILD_DIR kpack-writer-bench`).
#
# usage: bench/writer/static-build.sh BUILD_DIR OUTPUT
set -euo pipefail
BUILD=$(cd "${1:?usage: static-build.sh BUILD_DIR OUTPUT}" && pwd)
OUT=${2:?usage: static-build.sh BUILD_DIR OUTPUT}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LLVM_CONFIG=${LLVM_CONFIG:-llvm-config-22}
CXX=${CXX:-clang++-22}
LLVM_LIB=$("$LLVM_CONFIG" --libdir)
MULTIARCH=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
for A in "$BUILD/lib/libkpack_format.a" "$BUILD/lib/librocm_kpack_core.a" \
         "$BUILD/lib/libkpack_core.a" "$LLVM_LIB/libLLVMSupport.a" \
         "$LLVM_LIB/libLLVMDemangle.a" "/usr/lib/$MULTIARCH/libzstd.a" \
         "/usr/lib/$MULTIARCH/libz.a"; do
  [[ -f $A ]] || { echo "static-build.sh: missing $A" >&2; exit 1; }
done
# The flags LLVM's headers need (llvm-config --cxxflags, but exceptions on:
# the writer catches std::bad_alloc from its workers).
FLAGS=$("$LLVM_CONFIG" --cxxflags | sed 's/-fno-exceptions//')
"$CXX" $FLAGS -O2 -DNDEBUG -static -o "$OUT" \
  -I"$SRC/lib/format/include" -I"$SRC/core/include" \
  -I"$SRC/runtime/include" -I"$SRC/runtime/internal" \
  "$SRC/bench/writer/WriterBench.cpp" \
  "$BUILD/lib/libkpack_format.a" "$BUILD/lib/librocm_kpack_core.a" \
  "$BUILD/lib/libkpack_core.a" \
  "$LLVM_LIB/libLLVMSupport.a" "$LLVM_LIB/libLLVMDemangle.a" \
  "/usr/lib/$MULTIARCH/libzstd.a" "/usr/lib/$MULTIARCH/libz.a" \
  -lpthread -lrt -ldl -lm 2> >(grep -v -e "statically linked applications requires at runtime" -e ": in function " >&2)
strip "$OUT"
file "$OUT" | grep -q "statically linked" ||
  { echo "static-build.sh: $OUT is not statically linked" >&2; exit 1; }
ls -l "$OUT"
