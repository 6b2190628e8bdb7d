#!/bin/bash
# Installs artifacts into one root the way TheRock flattens them: every
# prefix of each artifact's artifact_manifest.txt copied into ROOT.
# usage: flatten.sh ROOT ARTIFACT...
set -e
ROOT=$1
shift
mkdir -p "$ROOT"
for A in "$@"; do
  while read -r P; do
    [ -n "$P" ] && cp -a "$A/$P/." "$ROOT/"
  done < "$A/artifact_manifest.txt"
done
