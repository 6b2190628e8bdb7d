#!/bin/bash
# Builds the split tests' demo artifact (test/lit/split/Inputs/build_tree.sh,
# cached) for the targets given, splits it with `kpack split` and installs
# the generic artifact and each target's artifact into ROOT as TheRock does
# (flatten.sh): ROOT/{bin,lib,libexec}/... with the archives in ROOT/.kpack/.
# usage: therock_install.sh CLANGXX INCLUDE_DIR KPACK_OBJ ROOT TARGET...
set -e
CXX=$1 INC=$2 OBJ=$3 ROOT=$4
shift 4
SPLIT=$(cd "$(dirname "$0")/../../split/Inputs" && pwd)
W=$ROOT.work
rm -rf "$W" "$ROOT"
bash "$SPLIT/build_tree.sh" "$CXX" "$INC" "$OBJ" "$W/in/demo_lib" "$@"
kpack split --artifact-dir "$W/in/demo_lib" --artifact-prefix demo_lib \
  --output-dir "$W/out" > /dev/null
ARTIFACTS=("$W/out/demo_lib_generic")
for T in "$@"; do ARTIFACTS+=("$W/out/demo_lib_$T"); done
bash "$SPLIT/flatten.sh" "$ROOT" "${ARTIFACTS[@]}"
rm -rf "$W"
