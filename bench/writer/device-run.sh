#!/usr/bin/env bash
# The writer's thread sweep on a many-core machine (docs/benchmarks.md,
# "Writer on many cores"), from one folder that holds everything it needs:
#
#   kpack-writer-bench          static (bench/writer/static-build.sh)
#   kpack-writer-bench-batches  optional: the same bench linked against the
#                               writer before issue 29 (batches and barriers)
#   *.kpack                     the input: Debian librocsparse 5.3's gfx1030
#                               archive (111 code objects, 181 MiB), decoded
#                               in memory by the bench before timing
#
# It runs every bench at 1, 2, 4, 8 and 16 threads (THREADS), ROUNDS rounds
# (default 3) taking turns, checks that every output is byte-identical,
# records a --time-trace of each bench at 16 threads and at 1 thread (for
# bench/writer/trace_model.py), and prints a table: wall time min-max and
# median, CPU time median, speedup over one thread (medians), peak RSS
# growth. Traces and the raw log go to OUT (default $OUT, else ./device-out).
# On 16 cores it takes well under a minute.
#
# On a shared machine, RT=1 runs each timed command under SCHED_FIFO
# (`chrt -f 10`, root), as bench/therock/scaling.sh does.
#
# usage: [RT=1] [THREADS="1 2 ..."] [ROUNDS=N] bench/writer/device-run.sh DIR [OUT]
set -euo pipefail
DIR=$(cd "${1:?usage: device-run.sh DIR [OUT]}" && pwd)
OUT=${2:-${OUT:-device-out}}
THREADS=${THREADS:-1 2 4 8 16}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ARCHIVE=$(ls "$DIR"/*.kpack | head -n 1)
BENCHES=(kpack-writer-bench)
[[ -x $DIR/kpack-writer-bench-batches ]] && BENCHES+=(kpack-writer-bench-batches)
PRIO=()
if [[ ${RT:-0} == 1 ]]; then
  PRIO=(chrt -f 10)
  "${PRIO[@]}" true || { echo "device-run.sh: chrt -f needs root" >&2; exit 1; }
fi
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
LOG=$OUT/runs.log
: > "$LOG"

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)${PRIO:+ (timed runs under ${PRIO[*]})}"
  echo "input: $(basename "$ARCHIVE") ($(stat -c %s "$ARCHIVE") bytes)"
} | tee "$OUT/machine.txt"

run() { # BENCH THREADS ROUND [extra args]
  local B=$1 T=$2 R=$3
  shift 3
  local Line
  Line=$(${PRIO[@]+"${PRIO[@]}"} "$DIR/$B" -j "$T" "$@" "$SCRATCH/$B-$T.kpack" "$ARCHIVE")
  echo "$B $T $R $Line" >> "$LOG"
}

for ((R = 1; R <= ROUNDS; R++)); do
  for T in $THREADS; do
    for B in "${BENCHES[@]}"; do
      run "$B" "$T" "$R"
    done
  done
done
for B in "${BENCHES[@]}"; do
  run "$B" 16 trace --time-trace "$OUT/$B-16.time-trace.json"
  run "$B" 1 trace --time-trace "$OUT/$B-1.time-trace.json"
done

# Byte-identity across thread counts and benches.
Identical=yes
First=$(ls "$SCRATCH"/*.kpack | head -n 1)
for F in "$SCRATCH"/*.kpack; do
  cmp -s "$First" "$F" || { Identical="NO ($(basename "$F") differs)"; }
done
echo "outputs byte-identical across benches and thread counts: $Identical" |
  tee -a "$OUT/machine.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine.txt"

# The table: per bench and thread count, wall min-max and median, CPU
# median, speedup of the median over one thread's, peak RSS growth.
awk -v rounds="$ROUNDS" '
function median(list,   n, a, i, j, t) {
  n = split(list, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
    if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$3 == "trace" { next }
{
  key = $1 " " $2
  if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  for (i = 4; i <= NF; i++) {
    if ($(i + 1) ~ /^s$/ && $(i + 2) ~ /^wall/) wall[key] = wall[key] " " $i
    if ($(i + 1) ~ /^s$/ && $(i + 2) ~ /^cpu/) cpu[key] = cpu[key] " " $i
    if ($i == "RSS") rss[key] = $(i + 1)
  }
}
END {
  printf "%-28s %7s %15s %8s %8s %8s %10s\n", "bench", "threads", "wall min-max", "median", "cpu", "speedup", "RSS growth"
  for (k = 1; k <= n; k++) {
    split(order[k], f, " ")
    split(wall[order[k]], w, " "); lo = hi = w[1]
    for (i in w) { if (w[i] + 0 < lo + 0) lo = w[i]; if (w[i] + 0 > hi + 0) hi = w[i] }
    m = median(wall[order[k]])
    if (f[2] == 1) base[f[1]] = m
    printf "%-28s %7s %7.3f-%-7.3f %8.3f %8.3f %7.2fx %10s\n", f[1], f[2], lo, hi, m,
      median(cpu[order[k]]), base[f[1]] / m, (order[k] in rss) ? rss[order[k]] : "-"
  }
}' "$LOG" | tee "$OUT/table.txt"
