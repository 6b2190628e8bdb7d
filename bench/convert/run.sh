#!/bin/bash
# Times kpack-convert on a large fat binary (default: Debian's 1.3 GB
# librocsparse) with zstd-3 per-target archives, and reports wall time,
# peak RSS (GNU time) and the output sizes. Results: docs/benchmarks.md,
# section "Convert".
#
# usage: bench/convert/run.sh BUILD_DIR [INPUT] [RUNS]
# Needs /usr/bin/time (Debian package `time`).
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR [INPUT] [RUNS]}
INPUT=${2:-/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1}
RUNS=${3:-3}
TOOL=$BUILD/bin/kpack-convert
[ -x "$TOOL" ] || { echo "error: $TOOL not built" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
NAME=$(basename "$INPUT")

# Warm the page cache so that runs compare compression, not disk reads.
cat "$INPUT" > /dev/null
echo "input: $INPUT ($(stat -c %s "$INPUT") bytes), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for I in $(seq "$RUNS"); do
  rm -rf "$WORK/out"
  /usr/bin/time -v -o "$WORK/time.txt" "$TOOL" "$INPUT" -o "$WORK/out/$NAME" \
      --kpack-dir="$WORK/out/kpack" --compression=zstd --level=3 --quiet
  WALL=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
  RSS=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
  echo "run $I: wall $WALL, peak RSS $((RSS / 1024)) MiB"
done
echo "host binary: $(stat -c %s "$WORK/out/$NAME") bytes"
TOTAL=0
for A in "$WORK"/out/kpack/*.kpack; do
  S=$(stat -c %s "$A")
  TOTAL=$((TOTAL + S))
  echo "archive $(basename "$A"): $S bytes"
done
echo "archives total: $TOTAL bytes"
