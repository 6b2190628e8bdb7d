#!/bin/bash
# TheRock's map/reduce on Debian's ROCm libraries: `kpack split` of an
# artifact holding librocsparse and librocrand (with their soname symlinks)
# against `cp -a` of the same artifact, and `kpack recombine` of two shards
# split from it against `cp -a` of the shards. Wall time and peak RSS from
# GNU time, each command run RUNS times (median reported) with a warm page
# cache (nothing is dropped; outputs are removed and `sync`ed between runs,
# untimed). Results: docs/benchmarks.md, section "TheRock split and
# recombine".
#
# usage: bench/therock/run.sh BUILD_DIR [RUNS] [SCRATCH_DIR]
# Needs /usr/bin/time (Debian package `time`), librocsparse0, librocrand1 and
# about 6 GB in SCRATCH_DIR (default /tmp).
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR [RUNS] [SCRATCH_DIR]}
RUNS=${2:-3}
SCRATCH=${3:-/tmp}
KPACK=$BUILD/bin/kpack
LIB=/usr/lib/x86_64-linux-gnu
for f in "$KPACK" /usr/bin/time; do
  [ -x "$f" ] || { echo "error: $f missing" >&2; exit 1; }
done
for f in librocsparse.so.0.1 librocrand.so.1.1; do
  [ -f "$LIB/$f" ] || { echo "error: $LIB/$f missing (apt-get install librocsparse0 librocrand1)" >&2; exit 1; }
done
"$KPACK" split --help > /dev/null 2>&1 || { echo "error: $KPACK has no split command" >&2; exit 1; }
W=$(mktemp -d "$SCRATCH/kpack-therock-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

# The unsplit artifact: <name>_<component>_<family>, one prefix per library
# (TheRock stages every subproject in its own stage directory).
A=$W/unsplit/math_lib_all
for p in rocSPARSE:librocsparse.so.0.1:librocsparse.so.0 rocRAND:librocrand.so.1.1:librocrand.so.1; do
  IFS=: read -r proj file soname <<< "$p"
  d=$A/math-libs/$proj/stage/lib
  mkdir -p "$d"
  cp --preserve=mode,timestamps "$LIB/$file" "$d/$file"
  ln -s "$file" "$d/$soname"
  ln -s "$soname" "$d/${soname%.*}"
done
printf 'math-libs/rocSPARSE/stage\nmath-libs/rocRAND/stage\n' > "$A/artifact_manifest.txt"
cat > "$W/config.json" <<'JSON'
{
  "primary_shard": "shard-gfx9",
  "architecture_groups": {
    "gfx9": {"display_name": "GCN5 and CDNA", "architectures": ["gfx900", "gfx906", "gfx908", "gfx90a"]},
    "gfx10": {"architectures": ["gfx1030"]},
    "gfx8": {"architectures": ["gfx803"]}
  }
}
JSON

seconds() { # GNU time's "h:mm:ss" or "m:ss.ss" -> seconds
  awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<< "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure LABEL OUTPUT_TO_REMOVE COMMAND...: prints each run, sets MED_WALL
# and MED_RSS (MiB).
measure() {
  local label=$1 out=$2; shift 2
  local walls=() rsss=()
  for i in $(seq "$RUNS"); do
    rm -rf "$out"
    sync
    /usr/bin/time -v -o "$W/time.txt" "$@" > "$W/cmd.log" 2>&1 ||
      { cat "$W/cmd.log" >&2; echo "error: $label failed" >&2; exit 1; }
    local wall rss
    wall=$(seconds "$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$W/time.txt")")
    rss=$(( $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$W/time.txt") / 1024 ))
    echo "  $label run $i: wall ${wall} s, peak RSS ${rss} MiB"
    walls+=("$wall"); rsss+=("$rss")
  done
  MED_WALL=$(printf '%s\n' "${walls[@]}" | median)
  MED_RSS=$(printf '%s\n' "${rsss[@]}" | median)
  echo "  $label median: wall ${MED_WALL} s, peak RSS ${MED_RSS} MiB"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

cat "$A"/math-libs/*/stage/lib/*.so.*.* > /dev/null
echo "artifact: $(du -sb "$A" | cut -f1) bytes ($(find "$A" -type f | wc -l) files), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

echo "split (all targets, zstd-3 archives):"
measure "cp -a" "$W/copy" cp -a "$A" "$W/copy"
CP_WALL=$MED_WALL CP_RSS=$MED_RSS
measure "kpack split" "$W/split" "$KPACK" split --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/split"
SPLIT_WALL=$MED_WALL SPLIT_RSS=$MED_RSS
# The same two with the writeback of their outputs in the timed command: cp -a
# leaves 1.3 GB of dirty pages behind, split about a fifth of that.
measure "cp -a; sync" "$W/copy" sh -c 'cp -a "$1" "$2" && sync' sh "$A" "$W/copy"
CPS_WALL=$MED_WALL
measure "kpack split; sync" "$W/split" sh -c '"$1" split --artifact-dir "$2" --artifact-prefix math_lib --output-dir "$3" && sync' sh "$KPACK" "$A" "$W/split"
SPLITS_WALL=$MED_WALL
echo "  outputs: $(cd "$W/split" && ls | tr '\n' ' ')"
echo "  generic: $(du -sb "$W/split/math_lib_generic" | cut -f1) bytes; archives: $(find "$W/split" -name '*.kpack' -printf '%s\n' | awk '{ s += $1 } END { print s }') bytes"

# Two CI shards, as two family builds would produce them.
"$KPACK" split --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/shards/shard-gfx9" --gpu-targets gfx900,gfx906,gfx908,gfx90a > /dev/null
"$KPACK" split --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/shards/shard-other" --gpu-targets gfx803,gfx1030 > /dev/null
echo "recombine (shards: $(du -sb "$W/shards" | cut -f1) bytes; $(find "$W/shards" -mindepth 2 -maxdepth 2 -type d | wc -l) artifacts):"
measure "cp -a" "$W/shards-copy" cp -a "$W/shards" "$W/shards-copy"
RCP_WALL=$MED_WALL
measure "kpack recombine" "$W/recombined" "$KPACK" recombine --input-shards-dir "$W/shards" --config "$W/config.json" --output-dir "$W/recombined"
REC_WALL=$MED_WALL REC_RSS=$MED_RSS
measure "kpack recombine --copy" "$W/recombined" "$KPACK" recombine --input-shards-dir "$W/shards" --config "$W/config.json" --output-dir "$W/recombined" --copy
RECC_WALL=$MED_WALL RECC_RSS=$MED_RSS
echo "  outputs: $(cd "$W/recombined" && ls | tr '\n' ' ')"

echo
echo "| step | median wall | peak RSS | x cp -a | target |"
echo "|---|---|---|---|---|"
echo "| cp -a artifact | $CP_WALL s | $CP_RSS MiB | 1 | |"
echo "| kpack split | $SPLIT_WALL s | $SPLIT_RSS MiB | $(ratio "$SPLIT_WALL" "$CP_WALL") | <= 5, <= 1024 MiB |"
echo "| cp -a artifact; sync | $CPS_WALL s | | 1 | |"
echo "| kpack split; sync | $SPLITS_WALL s | | $(ratio "$SPLITS_WALL" "$CPS_WALL") | <= 5 |"
echo "| cp -a shards | $RCP_WALL s | | 1 | |"
echo "| kpack recombine (hard links) | $REC_WALL s | $REC_RSS MiB | $(ratio "$REC_WALL" "$RCP_WALL") | <= 1.5 |"
echo "| kpack recombine --copy | $RECC_WALL s | $RECC_RSS MiB | $(ratio "$RECC_WALL" "$RCP_WALL") | <= 1.5 |"
