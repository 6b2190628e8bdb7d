#!/bin/bash
# Builds the demo TheRock artifact of the split tests (README.md) for the
# given offload targets into ARTIFACT. The build is cached below the build
# tree, keyed by the sources, the targets and the tools, so that the tests of
# one lit run compile it once.
# usage: build_tree.sh CLANGXX INCLUDE_DIR KPACK_OBJ ARTIFACT TARGET...
#   CLANGXX      clang++-22
#   INCLUDE_DIR  test/inputs (hip_min.h)
#   KPACK_OBJ    the build directory (lib/libhip_standin.so, ld.kpack); the
#                programs link the stand-in of KPACK_LIT_LIB_DIR instead
#                when lit sets it (kpack_plain_libs: the tools of a sanitizer
#                build, the libraries of a plain one)
#   ARTIFACT     the artifact directory to create
set -e
CXX=$1 INC=$2 OBJ=$(cd "$3" && pwd) ARTIFACT=$4
shift 4
SRC=$(cd "$(dirname "$0")" && pwd)
LIB=${KPACK_LIT_LIB_DIR:-$OBJ/lib}
LDKPACK=$OBJ/libexec/kpack/ld.lld
KEY=$( (echo "$OBJ $LIB $*"; cat "$0" "$SRC"/*.hip "$SRC"/demo.h "$INC"/hip_min.h;
        stat -c '%s %Y' "$LDKPACK" "$LIB/libhip_standin.so" "$CXX") |
       sha256sum | cut -c1-16)
CACHE=$OBJ/test/lit/split/tree-cache
TREE=$CACHE/$KEY
mkdir -p "$CACHE"

build() {
  local W=$1
  shift
  mkdir -p "$W/o"
  local A=$W/art FOO=$W/art/math-libs/foo/stage BAR=$W/art/math-libs/bar/stage
  local ARCHS="" T
  for T in "$@"; do ARCHS="$ARCHS --offload-arch=$T"; done
  local HIP="$CXX -x hip -nogpuinc -nogpulib -I$INC -I$SRC $ARCHS -O1 -fPIC"
  local RT="-L$LIB -lhip_standin -Wl,-rpath,$LIB"
  local LINK="$CXX -fuse-ld=lld"
  mkdir -p "$FOO/bin" "$FOO/lib" "$BAR/bin" "$BAR/lib" "$BAR/libexec/bar/deep"
  # libfoo: three translation units, one of them a compressed bundle (CCOB),
  # with its soname symlinks.
  $HIP -c "$SRC/foo_a.hip" -o "$W/o/foo_a.o"
  $HIP --offload-compress -c "$SRC/foo_b.hip" -o "$W/o/foo_b.o"
  $HIP -c "$SRC/foo_c.hip" -o "$W/o/foo_c.o"
  $LINK -shared -Wl,-soname,libfoo.so.1 "$W"/o/foo_{a,b,c}.o $RT -o "$FOO/lib/libfoo.so.1.0"
  ln -s libfoo.so.1.0 "$FOO/lib/libfoo.so.1"
  ln -s libfoo.so.1 "$FOO/lib/libfoo.so"
  $HIP -c "$SRC/foo_app.hip" -o "$W/o/foo_app.o"
  $LINK -pie "$W/o/foo_app.o" -L"$FOO/lib" -lfoo $RT -Wl,-rpath,'$ORIGIN/../lib' \
    -o "$FOO/bin/foo_app"
  # libbar with RELR relocations, libemit linked by ld.kpack (host-only, its
  # archives in lib/.kpack), a non-PIE tool and a PIE deep below the prefix.
  $HIP -c "$SRC/bar.hip" -o "$W/o/bar.o"
  $LINK -shared -Wl,-z,pack-relative-relocs "$W/o/bar.o" $RT -o "$BAR/lib/libbar.so"
  $HIP -c "$SRC/emit.hip" -o "$W/o/emit.o"
  $CXX -shared "$W/o/emit.o" $RT -fuse-ld=lld --ld-path="$LDKPACK" \
    -Wl,--kpack-dir="$BAR/lib/.kpack" -Wl,--kpack-metadata-room=512 -o "$BAR/lib/libemit.so"
  $HIP -c "$SRC/bar_tool.hip" -o "$W/o/bar_tool.o"
  $LINK -no-pie "$W/o/bar_tool.o" -L"$BAR/lib" -lbar -lemit $RT -Wl,-rpath,'$ORIGIN/../lib' \
    -o "$BAR/bin/bar_tool"
  $HIP -c "$SRC/helper.hip" -o "$W/o/helper.o"
  $LINK -pie "$W/o/helper.o" $RT -o "$BAR/libexec/bar/deep/helper"
  # Files without device code: a header, documents (LICENSE a hard link of
  # README), a CMake file, an empty directory.
  mkdir -p "$FOO/include" "$FOO/share/doc/foo" "$FOO/share/empty" "$FOO/lib/cmake/foo"
  echo '#pragma once' > "$FOO/include/foo.h"
  echo 'foo' > "$FOO/share/doc/foo/README"
  ln "$FOO/share/doc/foo/README" "$FOO/share/doc/foo/LICENSE"
  echo 'set(foo_FOUND 1)' > "$FOO/lib/cmake/foo/foo-config.cmake"
  # Kernel-database files (rocBLAS's Tensile layout), one without a target.
  local DB=$FOO/lib/rocblas/library F
  mkdir -p "$DB"
  for F in 'TensileLibrary_lazy_gfx90a:xnack+.dat' Kernels.so-000-gfx942.hsaco \
           TensileLibrary_gfx11-generic.co TensileLibrary_lazy_gfx1100.dat \
           TensileLibrary_fallback.dat; do
    echo "$F" > "$DB/$F"
  done
  # TheRock lists prefixes that have no directory (no file of the component).
  printf 'math-libs/foo/stage\nmath-libs/bar/stage\nmissing/stage\n' > "$A/artifact_manifest.txt"
  chmod 0750 "$FOO/bin/foo_app"
  chmod 0444 "$FOO/share/doc/foo/README"
  find "$A" -exec touch -h -d @1700000000 {} +
}

# One builder at a time; a lock left by a killed run expires.
LOCK=$TREE.lock
for I in $(seq 600); do
  mkdir "$LOCK" 2>/dev/null && break
  if [ -n "$(find "$LOCK" -maxdepth 0 -mmin +15 2>/dev/null)" ]; then rm -rf "$LOCK"; fi
  sleep 1
done
trap 'rmdir "$LOCK" 2>/dev/null' EXIT
if [ ! -d "$TREE/art" ]; then
  rm -rf "$TREE.tmp"
  build "$TREE.tmp" "$@"
  rm -rf "$TREE"
  mv "$TREE.tmp" "$TREE"
fi
mkdir -p "$(dirname "$ARTIFACT")"
rm -rf "$ARTIFACT"
cp -a "$TREE/art" "$ARTIFACT"
