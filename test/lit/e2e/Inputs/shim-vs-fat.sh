#!/bin/bash
# usage: shim-vs-fat.sh SHIM FAT HIPK AGENTS [ACCESS]
# Runs the fat build of a program under the stand-in HIP runtime, then its
# HIPK twin with the registration shim preloaded, for the same simulated GPUs
# (the shim is told them with ROCM_KPACK_ARCH_OVERRIDE, as there is no KFD
# here). ACCESS, if given, is the stand-in's HIP_STANDIN_ACCESS for both runs
# (clr-deferred: a stock CLR's access pattern, the shim's bundle is read on
# the first launch; eager: at registration). Prints the HIPK run's stand-in
# log, then its output, then checks that the runtime received exactly the
# same code objects from both.
set -eu
shim=$1 fat=$2 hipk=$3 agents=$4 access=${5:-}
export HIP_STANDIN_ACCESS=$access
dump=$hipk.dump.$agents${access:+.$access}
rm -rf "$dump"
mkdir -p "$dump/fat" "$dump/hipk"
HIP_STANDIN_AGENTS=$agents HIP_STANDIN_DUMP_DIR=$dump/fat "$fat" > /dev/null
LD_PRELOAD=$shim ROCM_KPACK_ARCH_OVERRIDE=$agents HIP_STANDIN_AGENTS=$agents \
  HIP_STANDIN_DUMP_DIR=$dump/hipk HIP_STANDIN_LOG=1 timeout 120 "$hipk" > "$dump/out" 2> "$dump/log"
cat "$dump/log" "$dump/out"
diff -r "$dump/fat" "$dump/hipk"
ls "$dump/hipk" | sed 's/^/identical /'
