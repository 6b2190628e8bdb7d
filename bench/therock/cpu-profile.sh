#!/bin/bash
# The two load-independent figures of `kpack split` at zstd level 3 on the
# artifact of run.sh (librocsparse and librocrand, math_lib_all), from one
# callgrind run of `kpack split -j 1 --level 3` (instruction counts, the same
# on a loaded or a quiet machine):
#  1. the share of split's instructions spent outside zstd compression
#     (1 - inclusive cost of ZSTD_compressCCtx and ZSTD_compress2 / total);
#     target <= 15%;
#  2. the -j2 / -j1 speedup bound: the serial fraction s is every
#     instruction outside the archive writer's worker function (which reads,
#     checks, hashes and compresses the entries); Amdahl's bound on 2 threads
#     is 1 / (s + (1 - s) / 2). The workers meet at the end of each batch
#     of entries: schedule.py gives the batches' makespan on 2 threads
#     (largest entries first, as the writer takes them), M
#     times the ideal, from the sizes of the archived code objects, and the
#     bound with it is 1 / (s + M (1 - s) / 2). Target >= 1.8 (the
#     coordinator takes wall-clock figures on a quiet machine).
# Callgrind counts each byte of `rep stosb`/`rep movsb` (glibc's memset and
# memcpy for large sizes) as one instruction: zero-filling and copying weigh
# more here than in cycles.
#
# usage: bench/therock/cpu-profile.sh BUILD_DIR [SCRATCH_DIR]
# Needs valgrind, python3, librocsparse0, librocrand1, about 3 GB in
# SCRATCH_DIR (default /tmp). Takes about 50 times split's CPU time.
set -euo pipefail
BUILD=${1:?usage: cpu-profile.sh BUILD_DIR [SCRATCH_DIR]}
SCRATCH=${2:-/tmp}
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=/usr/lib/x86_64-linux-gnu
for f in "$BUILD/bin/kpack" /usr/bin/valgrind /usr/bin/callgrind_annotate; do
  [ -x "$f" ] || { echo "error: $f missing" >&2; exit 1; }
done
for f in librocsparse.so.0.1 librocrand.so.1.1; do
  [ -f "$LIB/$f" ] || { echo "error: $LIB/$f missing (apt-get install librocsparse0 librocrand1)" >&2; exit 1; }
done
W=$(mktemp -d "$SCRATCH/kpack-cpu-profile.XXXXXX")
trap 'rm -rf "$W"' EXIT
A=$W/unsplit/math_lib_all
source "$(dirname "$0")/artifact.sh"
make_unsplit_artifact "$A" "$LIB"
# Valgrind 3.19 cannot read clang's DWARF 5: a copy without debug info
# (the symbol table stays).
cp "$BUILD/bin/kpack" "$W/kpack"
strip --strip-debug "$W/kpack"
valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" "$W/kpack" split \
  --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/out" \
  --level 3 -j 1 > "$W/cg.log" 2>&1 || { cat "$W/cg.log" >&2; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 "$W/cg.out" > "$W/inclusive.txt"
[ -z "${KEEP_PROFILE:-}" ] || cp "$W/inclusive.txt" "$KEEP_PROFILE"
ir() { # the largest inclusive count of a function whose line matches $1
  local n
  n=$(grep -E "$1" "$W/inclusive.txt" | head -1 | awk '{ gsub(",", "", $1); print $1 }')
  echo "${n:-0}"
}
TOTAL=$(grep 'PROGRAM TOTALS' "$W/inclusive.txt" | awk '{ gsub(",", "", $1); print $1 }')
ZSTD=$(( $(ir ':ZSTD_compressCCtx ') + $(ir ':ZSTD_compress2 ') ))
# The workers' function, or runOnWorkers where the compiler inlined it there.
WORKERS=$(ir 'writeArchives\(.*\)::\$_[0-9]+::operator\(\)\(\) const')
[ "$WORKERS" != 0 ] || WORKERS=$(ir 'runOnWorkers<kpack::ArchiveWriter::writeArchives')
for f in $(find "$W/out" -type f -name '*.kpack'); do
  "$BUILD/bin/kpack" ls "$f" | sed -n '/^KEY /,/^total:/p' | sed '1d;$d'
done > "$W/entries.txt"
SCHED=$(python3 "$HERE/schedule.py" --threads 2 --order largest < "$W/entries.txt")
M=$(sed -n 's/.*makespan \([0-9.]*\) x ideal.*/\1/p' <<< "$SCHED")
awk -v t="$TOTAL" -v z="$ZSTD" -v w="$WORKERS" -v m="$M" 'BEGIN {
  s = (t - w) / t
  printf "instructions: %.0f total, %.0f in zstd compression, %.0f in the compression workers\n", t, z, w
  printf "outside zstd compression: %.2f%% (target <= 15%%)\n", 100 * (t - z) / t
  printf "serial fraction: %.3f%%; Amdahl bound on 2 threads: %.3f\n", 100 * s, 1 / (s + (1 - s) / 2)
  printf "with the batch makespan (%.4f x ideal): -j2/-j1 bound %.3f (target >= 1.8)\n", m, 1 / (s + m * (1 - s) / 2)
}'
echo "$SCHED"
