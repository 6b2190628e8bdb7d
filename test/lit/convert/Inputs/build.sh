#!/bin/bash
# Builds the three-TU test program in the variants the tests ask for.
# usage: build.sh CLANGXX INCLUDE_DIR STANDIN_SO OUTDIR VARIANT...
#   pie      PIE executable (wrapper pointers: R_X86_64_RELATIVE addends)
#   relr     PIE with -z pack-relative-relocs (pointers in place, .relr.dyn)
#   nopie    non-PIE executable (absolute pointers in place)
#   shared   libprog.so (RELATIVE addends)
#   reversed libreversed.so with the wrappers in reverse order of the bundles
#   tiny     PIE of tu_b alone: a compressed .hip_fatbin smaller than a page
#   bfd-pie, bfd-nopie, bfd-shared, bfd-onetext
#            the same linked by GNU ld (bfd-onetext: -z noseparate-code, so
#            text, rodata, .hip_fatbin and .eh_frame share one R+X segment)
# The HIP runtime is the stand-in if it was built, else left unresolved.
set -e
CXX=$1 INC=$2 STANDIN=$3 OUT=$4
shift 4
SRC=$(dirname "$0")
HIP="$CXX -x hip -nogpuinc -nogpulib -I$INC --offload-arch=gfx90a:xnack+ --offload-arch=gfx1100"
mkdir -p "$OUT"
if [ ! -f "$OUT/c.o" ]; then
  $HIP -c "$SRC/tu_a.hip" -o "$OUT/a.o"
  $HIP --offload-compress -c "$SRC/tu_b.hip" -o "$OUT/b.o"
  $HIP -c "$SRC/tu_c.hip" -o "$OUT/c.o"
  $CXX -c "$SRC/main.cpp" -o "$OUT/main.o"
  $CXX -c "$SRC/main_b.cpp" -o "$OUT/main_b.o"
fi
OBJS="$OUT/a.o $OUT/b.o $OUT/c.o"
if [ -f "$STANDIN" ]; then
  RT="-L$(dirname "$STANDIN") -lhip_standin -Wl,-rpath,$(dirname "$STANDIN")"
else
  RT="-Wl,--unresolved-symbols=ignore-all"
fi
LINK="$CXX -fuse-ld=lld"
for V in "$@"; do
  case $V in
    pie) $LINK -pie $OBJS "$OUT/main.o" $RT -o "$OUT/pie" ;;
    relr) $LINK -pie -Wl,-z,pack-relative-relocs $OBJS "$OUT/main.o" $RT -o "$OUT/relr" ;;
    nopie) $LINK -no-pie $OBJS "$OUT/main.o" $RT -o "$OUT/nopie" ;;
    shared) $LINK -shared $OBJS $RT -o "$OUT/libprog.so" ;;
    reversed) $LINK -shared -Wl,--shuffle-sections=.hipFatBinSegment=-1 $OBJS $RT \
                -o "$OUT/libreversed.so" ;;
    bfd-pie) $CXX -fuse-ld=bfd -pie $OBJS "$OUT/main.o" $RT -o "$OUT/bfd-pie" ;;
    bfd-nopie) $CXX -fuse-ld=bfd -no-pie $OBJS "$OUT/main.o" $RT -o "$OUT/bfd-nopie" ;;
    bfd-shared) $CXX -fuse-ld=bfd -shared $OBJS $RT -o "$OUT/libbfd.so" ;;
    bfd-onetext) $CXX -fuse-ld=bfd -pie -Wl,-z,noseparate-code $OBJS "$OUT/main.o" $RT \
                   -o "$OUT/bfd-onetext" ;;
    tiny) $LINK -pie "$OUT/b.o" "$OUT/main_b.o" $RT -o "$OUT/tiny" ;;
    *) echo "build.sh: unknown variant $V" >&2; exit 1 ;;
  esac
done
