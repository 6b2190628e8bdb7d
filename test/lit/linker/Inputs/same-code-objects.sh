#!/bin/bash
# usage: same-code-objects.sh FAT KPACK AGENTS
# Runs the fat build and the kpack build of one program under the stand-in
# HIP runtime with the same simulated agents, dumping every code object the
# runtime receives, and checks that both received exactly the same bytes.
set -eu
fat=$1 kpack=$2 agents=$3
rm -rf "$fat.dump" "$kpack.dump"
mkdir -p "$fat.dump" "$kpack.dump"
HIP_STANDIN_AGENTS=$agents HIP_STANDIN_DUMP_DIR=$fat.dump "$fat" > /dev/null
HIP_STANDIN_AGENTS=$agents HIP_STANDIN_DUMP_DIR=$kpack.dump "$kpack" > /dev/null
echo "fat: $(ls "$fat.dump" | wc -l) code objects"
echo "kpack: $(ls "$kpack.dump" | wc -l) code objects"
diff -r "$fat.dump" "$kpack.dump"
ls "$kpack.dump" | sed 's/^/received /'
echo "identical"
