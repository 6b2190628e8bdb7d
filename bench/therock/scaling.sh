#!/bin/bash
# Thread scaling of `kpack split` at zstd level 3 (issue 19: -j2 >= 1.8x
# -j1 on 2 cores): `split --level 3 -j 1` and `-j 2` on the artifact of
# run.sh, taking turns, RUNS rounds after one untimed run each; wall time
# and peak RSS (GNU time), medians, and the ratio. With several BUILD_DIRs
# (e.g. a build of main and one of a branch) every build's two commands
# take turns in each round, so that load changes hit all of them alike.
#
# On a shared machine, RT=1 runs each timed command under SCHED_FIFO
# (`chrt -f 10`, needs root): its threads then get the cores whatever else
# is runnable, which is as close to an idle machine as a busy one gets
# (other processes wait for the few seconds of each run). Linux still
# keeps 5% of each CPU's time for other tasks (sched_rt_runtime_us), which
# can only slow -j2, when both CPUs run split, more than -j1.
#
# usage: [RT=1] bench/therock/scaling.sh RUNS BUILD_DIR...
# Needs /usr/bin/time, librocsparse0, librocrand1 and about 3 GB in
# ${SCRATCH:-/tmp}.
set -euo pipefail
RUNS=${1:?usage: scaling.sh RUNS BUILD_DIR...}
shift
[ $# -ge 1 ] || { echo "usage: scaling.sh RUNS BUILD_DIR..." >&2; exit 1; }
LIB=/usr/lib/x86_64-linux-gnu
for b in "$@"; do
  [ -x "$b/bin/kpack" ] || { echo "error: $b/bin/kpack missing" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time missing" >&2; exit 1; }
PRIO=()
if [ "${RT:-0}" = 1 ]; then
  PRIO=(chrt -f 10)
  "${PRIO[@]}" true || { echo "error: chrt -f needs root" >&2; exit 1; }
fi
W=$(mktemp -d "${SCRATCH:-/tmp}/kpack-scaling.XXXXXX")
trap 'rm -rf "$W"' EXIT
A=$W/unsplit/math_lib_all
source "$(dirname "$0")/artifact.sh"
make_unsplit_artifact "$A" "$LIB"

# once BUILD J: one timed split; prints "wall rss_kib".
once() {
  rm -rf "$W/out"
  sync
  "${PRIO[@]}" /usr/bin/time -f "%e %M" -o "$W/time.txt" "$1/bin/kpack" split \
    --artifact-dir "$A" --artifact-prefix math_lib --output-dir "$W/out" \
    --level 3 -j "$2" > "$W/cmd.log" 2>&1 ||
    { cat "$W/cmd.log" >&2; echo "error: split -j $2 of $1 failed" >&2; exit 1; }
  cat "$W/time.txt"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for b in "$@"; do once "$b" 1 > /dev/null; once "$b" 2 > /dev/null; done
for r in $(seq "$RUNS"); do
  for i in $(seq $#); do
    b=${!i}
    for j in 1 2; do
      once "$b" "$j" >> "$W/$i.$j"
    done
  done
done
echo "split --level 3, $RUNS runs each${PRIO:+ under ${PRIO[*]}}: median wall (runs) / peak RSS"
for i in $(seq $#); do
  b=${!i}
  j1=$(cut -d' ' -f1 "$W/$i.1" | median)
  j2=$(cut -d' ' -f1 "$W/$i.2" | median)
  r1=$(( $(cut -d' ' -f2 "$W/$i.1" | median) / 1024 ))
  r2=$(( $(cut -d' ' -f2 "$W/$i.2" | median) / 1024 ))
  echo "$b: -j1 $j1 s ($(cut -d' ' -f1 "$W/$i.1" | tr '\n' ' ')) $r1 MiB;" \
    "-j2 $j2 s ($(cut -d' ' -f1 "$W/$i.2" | tr '\n' ' ')) $r2 MiB;" \
    "-j1/-j2 $(awk -v a="$j1" -v b="$j2" 'BEGIN { printf "%.2f", a / b }') (target >= 1.8)"
done
