#!/bin/bash
# Compression schemes side by side (docs/benchmarks.md, "Compression"):
# today's zstd-per-kernel at level 3, zstd-shared (format version 2) and the
# release-grade zstd-long, on Debian's librocsparse and librocrand, written as
# TheRock lays them out (one archive per target ID) and as one archive of
# every target. Reports, per input and scheme: total and per-target archive
# sizes, compression wall time with -j 2, peak RSS, and the latency of
# loading a random code object (200 loads, cold archive open included;
# kpack_compress_load_bench) against zstd-per-kernel.
#
# usage: bench/compress/run.sh BUILD_DIR [SCRATCH_DIR] [INPUT...]
# Needs /usr/bin/time (Debian package `time`) and ~1 GB in SCRATCH_DIR.
# Takes about 15 minutes on 2 idle cores (zstd-long at level 19 dominates).
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR [SCRATCH_DIR] [INPUT...]}
SCRATCH=${2:-/tmp}
shift $(($# >= 2 ? 2 : $#))
INPUTS=("$@")
[ ${#INPUTS[@]} -gt 0 ] || INPUTS=(/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
                                   /usr/lib/x86_64-linux-gnu/librocrand.so.1.1)
CONVERT=$BUILD/bin/kpack-convert
LOADS=$BUILD/bin/kpack_compress_load_bench
for P in "$CONVERT" "$LOADS"; do
  [ -x "$P" ] || { echo "error: $P not built (ninja kpack kpack_compress_load_bench)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
WORK=$(mktemp -d "$SCRATCH/kpack-compress-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SCHEMES=(zstd zstd-shared zstd-long)

echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), zstd $(zstd --version 2>/dev/null | sed -n 's/.*v\([0-9.]*\).*/\1/p')"
for INPUT in "${INPUTS[@]}"; do
  NAME=$(basename "$INPUT")
  cat "$INPUT" > /dev/null # page cache warm: compression is measured, not disk reads
  RAW=
  echo
  echo "## $NAME"
  echo
  echo "| scheme | layout | archives | total | % of zstd | % of raw | smallest / largest archive | wall (-j 2) | peak RSS |"
  echo "|---|---|---|---|---|---|---|---|---|"
  declare -A BASE=()
  for LAYOUT in per-target all-target; do
    for S in "${SCHEMES[@]}"; do
      OUT=$WORK/$NAME/$S/$LAYOUT
      if [ "$LAYOUT" = per-target ]; then WHERE=(--kpack-dir="$OUT/kpack"); else WHERE=(--kpack-output="$OUT/kpack/all.kpack"); fi
      /usr/bin/time -f '%e %M' -o "$WORK/time" \
        "$CONVERT" "$INPUT" -o "$OUT/$NAME" "${WHERE[@]}" --compression="$S" --jobs=2 --quiet
      read -r WALL RSS < "$WORK/time"
      SIZES=$(stat -c %s "$OUT"/kpack/*.kpack | sort -n)
      TOTAL=$(echo "$SIZES" | awk '{s += $1} END {print s}')
      COUNT=$(echo "$SIZES" | wc -l)
      [ "$S" = zstd ] && BASE[$LAYOUT]=$TOTAL
      # Raw device code: the archives' original sizes.
      [ -n "$RAW" ] || RAW=$(for A in "$OUT"/kpack/*.kpack; do
          "$BUILD/bin/kpack" inspect --json "$A" | sed -n 's/^  "original_size": \([0-9]*\),$/\1/p'
        done | awk '{s += $1} END {print s}')
      awk -v s="$S" -v l="$LAYOUT" -v c="$COUNT" -v t="$TOTAL" -v b="${BASE[$LAYOUT]}" \
          -v r="$RAW" -v lo="$(echo "$SIZES" | head -1)" -v hi="$(echo "$SIZES" | tail -1)" \
          -v w="$WALL" -v m="$RSS" 'BEGIN {
        printf "| %s | %s | %d | %.1f MB | %.1f%% | %.2f%% | %.2f / %.2f MB | %.1f s | %d MiB |\n",
               s, l, c, t / 1e6, 100 * t / b, 100 * t / r, lo / 1e6, hi / 1e6, w, m / 1024 }'
    done
  done
  echo
  echo "Raw device code: $RAW bytes. Load latency, 200 random code objects (cold archive open each):"
  for LAYOUT in per-target all-target; do
    SETS=()
    for S in "${SCHEMES[@]}"; do
      SETS+=("$S=$(ls "$WORK/$NAME/$S/$LAYOUT"/kpack/*.kpack | paste -sd,)")
    done
    cat "$WORK/$NAME"/*/"$LAYOUT"/kpack/*.kpack > /dev/null
    echo
    echo "$LAYOUT:"
    echo
    "$LOADS" -n 200 -s 1 "${SETS[@]}"
  done
  rm -rf "${WORK:?}/$NAME"
done
