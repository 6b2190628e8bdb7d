#!/bin/bash
# usage: gen-big-device.sh DIR TUS MIB
# Writes DIR/big<i>.hip (i < TUS), each with one initialized MIB-MiB
# __device__ array (cheap to compile, MIB MiB of device code per target),
# and DIR/main.hip calling a kernel of each.
set -eu
dir=$1 tus=$2 mib=$3
mkdir -p "$dir"
for i in $(seq 0 $((tus - 1))); do
  cat > "$dir/big$i.hip.new" <<EOT
#include "hip_min.h"
__device__ unsigned char big$i[${mib}ull << 20] = {$((i + 1))};
__global__ void k$i(unsigned char *p) { p[0] = big$i[p[1]]; }
void launch$i() { k$i<<<1, 1>>>(nullptr); }
EOT
  # Unchanged sources keep their time stamps (bench/scale reuses objects).
  if cmp -s "$dir/big$i.hip.new" "$dir/big$i.hip"; then rm "$dir/big$i.hip.new"
  else mv "$dir/big$i.hip.new" "$dir/big$i.hip"; fi
done
{
  echo '#include "hip_min.h"'
  for i in $(seq 0 $((tus - 1))); do echo "void launch$i();"; done
  echo 'int main() {'
  for i in $(seq 0 $((tus - 1))); do echo "  launch$i();"; done
  echo '  return 0;'
  echo '}'
} > "$dir/main.hip.new"
if cmp -s "$dir/main.hip.new" "$dir/main.hip"; then rm "$dir/main.hip.new"
else mv "$dir/main.hip.new" "$dir/main.hip"; fi
