#!/bin/bash
# Builds the Windows test programs (two HIP TUs and a main) in the variants
# the tests ask for. usage: build.sh CLANGXX LLVM_BIN OUTDIR VARIANT...
#   exe      mingw EXE, old offload driver: tu_a uncompressed, tu_b CCOB
#   dll      prog.dll of the same objects (+ libprog.a) and use.exe using it
#   new      mingw EXE, --offload-new-driver (one bundle per TU)
#   rdc      mingw EXE, --offload-new-driver -fgpu-rdc (one bundle)
#   rdc-dll  mingw DLL, --offload-new-driver -fgpu-rdc (+ librdc.a), and
#            use-rdc.exe using it
#   ccob     mingw EXE, every bundle compressed (--offload-compress)
#   sections mingw EXE with ten more data sections: its section table
#            fills the headers (the converter must grow them)
#   tu-a     tu_a.dll: tu_a alone (one bundle), for comparing archives
#   msvc     x86_64-pc-windows-msvc objects linked by lld-link /release
#            (checksum set) with a small startup object, no C runtime
#   reloc    reloc.dll (the dll variant's objects) with the same preferred
#            ImageBase as reloc.exe, which imports it and prints where both
#            were loaded: the loader must relocate the DLL
# KPACK_WIN_ARCHS replaces the offload targets (default gfx90a:xnack+
# gfx1100).
# The HIP runtime is resolved through an import library of amdhip64.dll
# (amdhip64.def, llvm-dlltool); running the programs needs that DLL.
set -e
CXX=$1 BIN=$2 OUT=$3
shift 3
SRC=$(dirname "$0")
ARCHS=""
for A in ${KPACK_WIN_ARCHS:-gfx90a:xnack+ gfx1100}; do ARCHS="$ARCHS --offload-arch=$A"; done
MINGW="--target=x86_64-w64-mingw32"
HIP="$CXX $MINGW -x hip -nogpuinc -nogpulib -I$SRC -I$SRC/../../../inputs $ARCHS"
LINK="$CXX $MINGW -fuse-ld=lld"
mkdir -p "$OUT"
[ -f "$OUT/libamdhip64.a" ] ||
  "$BIN/llvm-dlltool" -m i386:x86-64 -d "$SRC/amdhip64.def" -l "$OUT/libamdhip64.a"
[ -f "$OUT/main.o" ] || $CXX $MINGW -c "$SRC/main.cpp" -o "$OUT/main.o"
old_objs() {
  [ -f "$OUT/a.o" ] || $HIP -c "$SRC/tu_a.hip" -o "$OUT/a.o"
  [ -f "$OUT/b.o" ] || $HIP --offload-compress -c "$SRC/tu_b.hip" -o "$OUT/b.o"
}
RT="-L$OUT -lamdhip64"
for V in "$@"; do
  case $V in
    exe) old_objs; $LINK "$OUT/a.o" "$OUT/b.o" "$OUT/main.o" $RT -o "$OUT/app.exe" ;;
    dll) old_objs
         $LINK -shared "$OUT/a.o" "$OUT/b.o" $RT -o "$OUT/prog.dll" \
           -Wl,--out-implib,"$OUT/libprog.a"
         $LINK "$OUT/main.o" -L"$OUT" -lprog -o "$OUT/use.exe" ;;
    new) $HIP --offload-new-driver -c "$SRC/tu_a.hip" -o "$OUT/na.o"
         $HIP --offload-new-driver -c "$SRC/tu_b.hip" -o "$OUT/nb.o"
         $LINK --offload-new-driver "$OUT/na.o" "$OUT/nb.o" "$OUT/main.o" $RT -o "$OUT/new.exe" ;;
    rdc|rdc-dll)
         [ -f "$OUT/ra.o" ] || $HIP --offload-new-driver -fgpu-rdc -c "$SRC/tu_a.hip" -o "$OUT/ra.o"
         [ -f "$OUT/rb.o" ] || $HIP --offload-new-driver -fgpu-rdc -c "$SRC/tu_b.hip" -o "$OUT/rb.o"
         RDC="$LINK --offload-new-driver -fgpu-rdc --hip-link $ARCHS"
         if [ $V = rdc ]; then
           $RDC "$OUT/ra.o" "$OUT/rb.o" "$OUT/main.o" $RT -o "$OUT/rdc.exe"
         else
           $RDC -shared "$OUT/ra.o" "$OUT/rb.o" $RT -o "$OUT/rdc.dll" \
             -Wl,--out-implib,"$OUT/librdc.a"
           $LINK "$OUT/main.o" -L"$OUT" -lrdc -o "$OUT/use-rdc.exe"
         fi ;;
    reloc) old_objs
         $LINK -shared "$OUT/a.o" "$OUT/b.o" $RT -Wl,--image-base=0x140000000 \
           -o "$OUT/reloc.dll" -Wl,--out-implib,"$OUT/libreloc.a"
         $CXX $MINGW -x c -c "$SRC/reloc_main.c" -o "$OUT/reloc_main.o"
         $LINK "$OUT/reloc_main.o" -L"$OUT" -lreloc -Wl,--image-base=0x140000000 \
           -o "$OUT/reloc.exe" ;;
    tu-a) old_objs; $LINK -shared "$OUT/a.o" $RT -o "$OUT/tu_a.dll" ;;
    ccob) $HIP --offload-compress -c "$SRC/tu_a.hip" -o "$OUT/ca.o"
          [ -f "$OUT/b.o" ] || $HIP --offload-compress -c "$SRC/tu_b.hip" -o "$OUT/b.o"
          $LINK "$OUT/ca.o" "$OUT/b.o" "$OUT/main.o" $RT -o "$OUT/ccob.exe" ;;
    sections) old_objs
          $CXX $MINGW -c "$SRC/sections.c" -o "$OUT/sections.o"
          $LINK "$OUT/a.o" "$OUT/b.o" "$OUT/main.o" "$OUT/sections.o" $RT -o "$OUT/sections.exe" ;;
    msvc) MSVC="--target=x86_64-pc-windows-msvc"
          $CXX $MSVC -x hip -nogpuinc -nogpulib -I"$SRC" -I"$SRC/../../../inputs" $ARCHS -c "$SRC/tu_a.hip" -o "$OUT/ma.obj"
          $CXX $MSVC -x hip -nogpuinc -nogpulib -I"$SRC" -I"$SRC/../../../inputs" $ARCHS --offload-compress \
            -c "$SRC/tu_b.hip" -o "$OUT/mb.obj"
          $CXX $MSVC -c "$SRC/main.cpp" -o "$OUT/mmain.obj"
          $CXX $MSVC -x c -c "$SRC/startup.c" -o "$OUT/startup.obj"
          # Not in OUT: lld's mingw driver would take this kernel32.lib for
          # -lkernel32 in the mingw links.
          mkdir -p "$OUT/msvc-lib"
          "$BIN/llvm-dlltool" -m i386:x86-64 -d "$SRC/amdhip64.def" -l "$OUT/msvc-lib/amdhip64.lib"
          "$BIN/llvm-dlltool" -m i386:x86-64 -d "$SRC/kernel32.def" -l "$OUT/msvc-lib/kernel32.lib"
          "$BIN/lld-link" /nologo /nodefaultlib /release /subsystem:console \
            /entry:mainCRTStartup "$OUT/ma.obj" "$OUT/mb.obj" "$OUT/mmain.obj" \
            "$OUT/startup.obj" "$OUT/msvc-lib/amdhip64.lib" "$OUT/msvc-lib/kernel32.lib" /out:"$OUT/msvc.exe" ;;
    *) echo "build.sh: unknown variant $V" >&2; exit 1 ;;
  esac
done
