#!/bin/bash
# TheRock's map/reduce on Debian's ROCm libraries: `kpack split` of an
# artifact holding librocsparse and librocrand (with their soname symlinks)
# against `cp -a` of the same artifact, and `kpack recombine` of two shards
# split from it against `cp -a` of the shards. Wall time and peak RSS from
# GNU time, medians of RUNS runs with a warm page cache (nothing is dropped;
# outputs are removed and `sync`ed before each run, untimed). Each command
# runs once untimed first; then the commands compared take turns, one run
# each per round. Results: docs/benchmarks.md, section "TheRock split and
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

# The unsplit artifact: <name>_<component>_<family> (bench/therock/artifact.sh).
A=$W/unsplit/math_lib_all
source "$(dirname "$0")/artifact.sh"
make_unsplit_artifact "$A" "$LIB"
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

# once KEY OUTPUT_TO_REMOVE COMMAND...: one timed run of COMMAND after
# removing (and syncing away) the previous output; appends "wall rss" to
# $W/KEY.runs.
once() {
  local key=$1 out=$2; shift 2
  rm -rf "$out"
  sync
  /usr/bin/time -v -o "$W/time.txt" "$@" > "$W/cmd.log" 2>&1 ||
    { cat "$W/cmd.log" >&2; echo "error: $* failed" >&2; exit 1; }
  local wall rss
  wall=$(seconds "$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$W/time.txt")")
  rss=$(( $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$W/time.txt") / 1024 ))
  echo "$wall $rss" >> "$W/$key.runs"
}
# compare KEY... : the commands in the arrays named KEY (output directory
# first, then the command) run once each untimed (the first run pays for
# the write-back of earlier outputs), then RUNS rounds, one run of each
# command per round, so that load changes hit all of them alike.
compare() {
  local key round
  for key in "$@"; do
    unset -n cmd; local -n cmd=$key
    once warmup "${cmd[@]}"
  done
  for round in $(seq "$RUNS"); do
    for key in "$@"; do
      local -n cmd=$key
      once "$key" "${cmd[@]}"
    done
  done
  for key in "$@"; do
    echo "  $key: $(awk '{ printf "%s%s s/%s MiB", (NR > 1 ? ", " : ""), $1, $2 }' "$W/$key.runs")"
    printf -v "${key}_WALL" '%s' "$(cut -d' ' -f1 "$W/$key.runs" | median)"
    printf -v "${key}_RSS" '%s' "$(cut -d' ' -f2 "$W/$key.runs" | median)"
  done
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

cat "$A"/math-libs/*/stage/lib/*.so.*.* > /dev/null
echo "artifact: $(du -sb "$A" | cut -f1) bytes ($(find "$A" -type f | wc -l) files), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

echo "split (all targets, zstd archives at split's default level 3); runs as wall/peak RSS:"
cp_artifact=("$W/copy" cp -a "$A" "$W/copy")
split=("$W/split" "$KPACK" split --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/split")
# Upstream's output format (uncompressed archives): the same work without
# zstd, which is what bounds the default run on few cores.
split_none=("$W/split-none" "$KPACK" split --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/split-none" --compression none)
# The same with the writeback of their outputs inside the timed command:
# cp -a leaves 1.3 GB of dirty pages behind, split about a fifth of that.
cp_artifact_sync=("$W/copy-sync" sh -c 'cp -a "$1" "$2" && sync' sh "$A" "$W/copy-sync")
split_sync=("$W/split-sync" sh -c '"$1" split --artifact-dir "$2" --artifact-prefix math_lib --output-dir "$3" && sync' sh "$KPACK" "$A" "$W/split-sync")
# Thread scaling at zstd level 3 (issue 19: -j2 >= 1.8x -j1 in wall time on
# 2 cores); the load-independent figures are cpu-profile.sh's.
split_l3_j1=("$W/split-l3-j1" "$KPACK" split --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/split-l3-j1" --level 3 -j 1)
split_l3_j2=("$W/split-l3-j2" "$KPACK" split --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/split-l3-j2" --level 3 -j 2)
compare cp_artifact split split_none cp_artifact_sync split_sync split_l3_j1 split_l3_j2
echo "  outputs: $(cd "$W/split" && ls | tr '\n' ' ')"
echo "  generic: $(du -sb "$W/split/math_lib_generic" | cut -f1) bytes; archives: $(find "$W/split" -name '*.kpack' -printf '%s\n' | awk '{ s += $1 } END { print s }') bytes"

# Two CI shards, as two family builds would produce them.
"$KPACK" split --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/shards/shard-gfx9" --gpu-targets gfx900,gfx906,gfx908,gfx90a > /dev/null
"$KPACK" split --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/shards/shard-other" --gpu-targets gfx803,gfx1030 > /dev/null
echo "recombine (shards: $(du -sb "$W/shards" | cut -f1) bytes; $(find "$W/shards" -mindepth 2 -maxdepth 2 -type d | wc -l) artifacts); runs as wall/peak RSS:"
cp_shards=("$W/shards-copy" cp -a "$W/shards" "$W/shards-copy")
recombine=("$W/recombined" "$KPACK" recombine --input-shards-dir "$W/shards" --config "$W/config.json" --output-dir "$W/recombined")
recombine_copy=("$W/recombined-copy" "$KPACK" recombine --input-shards-dir "$W/shards" --config "$W/config.json" --output-dir "$W/recombined-copy" --copy)
compare cp_shards recombine recombine_copy
echo "  outputs: $(cd "$W/recombined" && ls | tr '\n' ' ')($(du -sb "$W/recombined-copy" | cut -f1) bytes)"

echo
echo "| step | median wall | peak RSS | x cp -a | target |"
echo "|---|---|---|---|---|"
echo "| cp -a artifact | $cp_artifact_WALL s | $cp_artifact_RSS MiB | 1 | |"
echo "| kpack split | $split_WALL s | $split_RSS MiB | $(ratio "$split_WALL" "$cp_artifact_WALL") | <= 5, <= 1024 MiB |"
echo "| kpack split --compression none | $split_none_WALL s | $split_none_RSS MiB | $(ratio "$split_none_WALL" "$cp_artifact_WALL") | |"
echo "| cp -a artifact; sync | $cp_artifact_sync_WALL s | | 1 | |"
echo "| kpack split; sync | $split_sync_WALL s | | $(ratio "$split_sync_WALL" "$cp_artifact_sync_WALL") | <= 5 |"
echo "| kpack split --level 3 -j 1 | $split_l3_j1_WALL s | $split_l3_j1_RSS MiB | $(ratio "$split_l3_j1_WALL" "$cp_artifact_WALL") | |"
echo "| kpack split --level 3 -j 2 | $split_l3_j2_WALL s | $split_l3_j2_RSS MiB | $(ratio "$split_l3_j2_WALL" "$cp_artifact_WALL") | -j1/-j2 = $(ratio "$split_l3_j1_WALL" "$split_l3_j2_WALL") >= 1.8 |"
echo "| cp -a shards | $cp_shards_WALL s | $cp_shards_RSS MiB | 1 | |"
echo "| kpack recombine (hard links) | $recombine_WALL s | $recombine_RSS MiB | $(ratio "$recombine_WALL" "$cp_shards_WALL") | <= 1.5 |"
echo "| kpack recombine --copy | $recombine_copy_WALL s | $recombine_copy_RSS MiB | $(ratio "$recombine_copy_WALL" "$cp_shards_WALL") | <= 1.5 |"
