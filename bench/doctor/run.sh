#!/bin/bash
# Times `kpack doctor` on the tree of make-tree.sh: ROUNDS runs (default 3)
# each for 1 GPU, 4 GPUs and 20 GPUs (one per archive target, the generic
# ones left out: GPUs are processors), and 1 GPU nothing serves (gfx803:
# every binary fails, each diagnosis lists the 20 archives beside its search
# path), the tree walked from its root; prints
# wall, user and system seconds and the peak RSS of each run and the exit
# status (0: every binary loads on every GPU).
# usage: bench/doctor/run.sh BUILD_DIR TREE [ROUNDS]
set -uo pipefail
KPACK=$(cd "$1" && pwd)/bin/kpack
TREE=$2
ROUNDS=${3:-3}
ONE="--gpu gfx942:sramecc+:xnack-"
FOUR="$ONE --gpu gfx90a:xnack+ --gpu gfx1100 --gpu gfx1201"
ALL=""
for G in gfx900:xnack- gfx906:sramecc+:xnack- gfx908:sramecc+:xnack- gfx90a:sramecc+:xnack- \
         gfx90a:sramecc+:xnack+ gfx942:sramecc+:xnack- gfx950:sramecc+:xnack- gfx1010:xnack- \
         gfx1030 gfx1031 gfx1100 gfx1101 gfx1102 gfx1150 gfx1151 gfx1200 gfx1201 \
         gfx1032 gfx1103 gfx902:xnack-; do
  ALL="$ALL --gpu $G"
done
NONE="--gpu gfx803"
for SET in ONE FOUR ALL NONE; do
  for R in $(seq "$ROUNDS"); do
    /usr/bin/time -f "$SET round $R: %e s wall, %U s user, %S s sys, %M KiB max RSS" \
      "$KPACK" doctor ${!SET} "$TREE" > /tmp/kpack-doctor-bench.out 2> /tmp/kpack-doctor-bench.err
    echo "exit $? $(tail -1 /tmp/kpack-doctor-bench.out) | $(tail -1 /tmp/kpack-doctor-bench.err)"
  done
done
