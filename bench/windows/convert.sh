#!/bin/bash
# Issue 17's Windows row: `kpack convert` of a DLL against the same device
# code in an ELF shared library.
#
# usage: bench/windows/convert.sh BUILD_DIR [MIB [RUNS [WORK_DIR]]]
#   MIB   device code to embed, at least (128; whole bundles)
#   RUNS  timed conversions of each, alternating (5)
# The device code is real: the first bundles of Debian's librocsparse
# (.hip_fatbin), embedded page-aligned by bench/windows/gen-fatbin.py into
#   libdev.so  (clang-22, ELF, .hip_fatbin + .hipFatBinSegment wrappers)
#   dev.dll    (clang-22 --target=x86_64-w64-mingw32 + lld, .hip_fat +
#               .hipFatB wrappers with DIR64 base relocations)
# and each is converted with `kpack convert --kpack-dir --compression=zstd
# --level=3` (page cache warm). Prints the median wall time and peak RSS of
# each, their ratios (target: the DLL within 1.2x of the ELF figure), and the
# converted image's size against upstream's layout rule (.kpackrf added,
# .hip_fat's whole 4 KiB pages of file bytes removed, a partial page kept).
# Results: docs/benchmarks.md, "Windows: convert of a DLL".
set -euo pipefail
BUILD=$(cd "${1:?usage: convert.sh BUILD_DIR [MIB [RUNS [WORK_DIR]]]}" && pwd)
MIB=${2:-128} RUNS=${3:-5}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KPACK=$BUILD/bin/kpack
LIBSPARSE=/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
for f in "$KPACK" /usr/bin/time "$LIBSPARSE"; do
  [ -e "$f" ] || { echo "convert.sh: $f missing (build the project; apt-get install time librocsparse0)" >&2; exit 1; }
done
for p in clang-22 llvm-objcopy-22 llvm-readobj-22 x86_64-w64-mingw32-gcc python3; do
  command -v "$p" > /dev/null || { echo "convert.sh: $p missing (bash scripts/install-deps.sh)" >&2; exit 1; }
done
if [ -n "${4:-}" ]; then W=$4; mkdir -p "$W"; else W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; fi
W=$(cd "$W" && pwd)
cd "$W"
if [ ! -f fatbin.bin ]; then
  llvm-objcopy-22 --dump-section .hip_fatbin=fatbin.bin "$LIBSPARSE" scratch.so
  rm -f scratch.so
fi
python3 "$SRC/bench/windows/gen-fatbin.py" fatbin.bin "$MIB" gen
(cd gen &&
  clang-22 -c elf.s -o elf.o && clang-22 -shared -nostdlib -fuse-ld=lld elf.o -o libdev.so &&
  clang-22 --target=x86_64-w64-mingw32 -c coff.s -o coff.o &&
  clang-22 --target=x86_64-w64-mingw32 -fuse-ld=lld -shared coff.o -o dev.dll)
cat gen/libdev.so gen/dev.dll > /dev/null
echo "inputs: libdev.so $(stat -c %s gen/libdev.so) B, dev.dll $(stat -c %s gen/dev.dll) B;" \
  "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
convert() { # NAME: one timed conversion, appends "wall rss_kb" to NAME.runs
  rm -rf "out-$1"
  /usr/bin/time -f "%e %M" -o time.txt "$KPACK" convert "gen/$1" -o "out-$1/$1" \
    --kpack-dir="out-$1/kpack" --compression=zstd --level=3 --quiet
  cat time.txt >> "$1.runs"
}
rm -f ./*.runs
convert libdev.so; convert dev.dll; rm -f ./*.runs # untimed warm-up
for _ in $(seq "$RUNS"); do convert libdev.so; convert dev.dll; done
for n in libdev.so dev.dll; do
  wall=$(cut -d' ' -f1 "$n.runs" | median); rss=$(cut -d' ' -f2 "$n.runs" | median)
  printf '%-10s median wall %5.2f s (runs: %s), median peak RSS %d KiB, output %d B, archives %d B\n' \
    "$n" "$wall" "$(cut -d' ' -f1 "$n.runs" | tr '\n' ' ' | sed 's/ $//')" "$rss" \
    "$(stat -c %s "out-$n/$n")" "$(cat "out-$n"/kpack/*.kpack | wc -c)"
  eval "wall_${n//[.-]/_}=$wall rss_${n//[.-]/_}=$rss"
done
awk -v a="$wall_dev_dll" -v b="$wall_libdev_so" -v c="$rss_dev_dll" -v d="$rss_libdev_so" \
  'BEGIN { printf "DLL / ELF: wall %.2fx, peak RSS %.2fx (target: within 1.2x)\n", a / b, c / d }'
# Upstream's rule keeps .hip_fat's last partial 4 KiB page of file bytes;
# this converter drops all of them. .hip_fat's SizeOfRawData in the input:
raw=$(llvm-readobj-22 --sections gen/dev.dll |
  awk '/Name: .hip_fat /{f=1} f && /RawDataSize:/ && !done {print $2; done=1}')
ours=$(stat -c %s out-dev.dll/dev.dll)
echo "converted dev.dll: $ours B; upstream's layout rule: $((ours + raw % 4096)) B" \
  "(.hip_fat raw $raw B, $((raw % 4096)) B in a partial page); input $(stat -c %s gen/dev.dll) B"
