#!/bin/bash
# Runs every program of the demo artifact installed in ROOT on the stand-in
# runtime for the agents given; prints each program's output and the
# stand-in's summary, exits non-zero if one fails.
# usage: run.sh ROOT AGENTS
set -eo pipefail
ROOT=$1 AGENTS=$2
for P in bin/foo_app bin/bar_tool libexec/bar/deep/helper; do
  echo "== $P"
  env HIP_STANDIN_AGENTS="$AGENTS" HIP_STANDIN_LOG=1 "$ROOT/$P" 2>&1 |
    grep -E 'Kernel|Fill|resolved|error|kpack '
done
