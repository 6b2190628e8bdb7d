#!/bin/bash
# Builds the fat test wheel OUTDIR/pkg-1.0-py3-none-linux_x86_64.whl:
#   pkg/__init__.py, pkg/util.py        ctypes loads lib/libpkg_ext.so
#   pkg/lib/libpkg_ext.so               HIP extension (fat: gfx90a:xnack+,
#                                       gfx942, gfx11-generic), links
#   pkg/lib/libpkg_core.so.1            the second fat library (soname;
#                                       compressed bundle), and
#   pkg/lib/libpkg_core.so              its symlink, a copy in the wheel
#   pkg/lib/libplain.so                 a library without device code
#   pkg/lib/aotriton.images/amd-<target>/flash/attn_fwd/*.aks2
#                                       AOTriton-style kernel images, also
#                                       for the family directories named in
#                                       $AOTRITON_FAMILIES ("gfx9xx gfx94x")
# packed by pack_wheel.py as `wheel` packs (extra arguments go to it), and
# OUTDIR/bootstrap/rocm_bootstrap-1.0-py3-none-any.whl, a stand-in for the
# rocm-bootstrap distribution every split host wheel requires. The tree is
# left in OUTDIR/tree. The libraries are compiled once per version
# of their sources into a cache beside OUTDIR (under a lock: lit runs the
# tests in parallel).
# usage: build_fat_wheel.sh CLANGXX INCLUDE_DIR KPACK_LIB_DIR PYTHON OUTDIR [pack_wheel.py options]
set -euo pipefail
CXX=$1 INC=$2 LIB=$3 PY=$4 OUT=$5
shift 5
SRC=$(cd "$(dirname "$0")" && pwd)
KEY=$( { cat "$SRC/pkg_core.hip" "$SRC/pkg_ext.hip" "$SRC/plain.cpp" "$INC/hip_min.h" "$0"; \
         echo "$CXX $LIB"; } | sha256sum | cut -c1-16)
mkdir -p "$(dirname "$OUT")"
CACHE=$(dirname "$OUT")/fat-libs-$KEY
exec 9>"$CACHE.lock"
flock 9
if [ ! -f "$CACHE/done" ]; then
  rm -rf "$CACHE" && mkdir -p "$CACHE"
  HIP="$CXX -x hip -nogpuinc -nogpulib -I$INC -fPIC -shared -fuse-ld=lld \
    --offload-arch=gfx90a:xnack+ --offload-arch=gfx942 --offload-arch=gfx11-generic"
  RT="-L$LIB -lhip_standin -Wl,-rpath,$LIB"
  $HIP --offload-compress "$SRC/pkg_core.hip" -Wl,-soname,libpkg_core.so.1 $RT \
    -o "$CACHE/libpkg_core.so.1"
  ln -s libpkg_core.so.1 "$CACHE/libpkg_core.so"
  $HIP "$SRC/pkg_ext.hip" -L"$CACHE" -lpkg_core -Wl,-rpath,'$ORIGIN' $RT \
    -o "$CACHE/libpkg_ext.so"
  $CXX -fPIC -shared -fuse-ld=lld "$SRC/plain.cpp" -o "$CACHE/libplain.so"
  touch "$CACHE/done"
fi
exec 9>&-

rm -rf "$OUT/tree" && mkdir -p "$OUT/tree/pkg/lib"
cp "$SRC/pkg/__init__.py" "$SRC/pkg/util.py" "$OUT/tree/pkg/"
cp -P "$CACHE/libpkg_core.so.1" "$CACHE/libpkg_core.so" "$CACHE/libpkg_ext.so" "$CACHE/libplain.so" \
  "$OUT/tree/pkg/lib/"
for T in gfx90a:xnack+ gfx942 gfx11-generic ${AOTRITON_FAMILIES:-}; do
  D="$OUT/tree/pkg/lib/aotriton.images/amd-$T/flash/attn_fwd"
  mkdir -p "$D"
  for N in 0 1; do
    echo "aotriton kernel image attn_fwd #$N for $T" > "$D/attn_fwd-Sig-F__$N.aks2"
  done
done
"$PY" "$SRC/pack_wheel.py" "$OUT/tree" "$OUT" "$@" > /dev/null
rm -rf "$OUT/bootstrap-tree" && mkdir -p "$OUT/bootstrap-tree/rocm_bootstrap"
echo '"""Stand-in for rocm-bootstrap (kpack wheel tests)."""' \
  > "$OUT/bootstrap-tree/rocm_bootstrap/__init__.py"
"$PY" "$SRC/pack_wheel.py" "$OUT/bootstrap-tree" "$OUT/bootstrap" --name rocm_bootstrap \
  --purelib --tag py3-none-any > /dev/null
