#!/bin/bash
# Runs every program of the demo artifact installed in ROOT on the stand-in
# runtime for the agents given. Prints, per program, its exit status, the
# code objects the stand-in loaded from archives (ROOT shown as "ROOT") and
# what each agent received, the program's launch results and the stand-in's
# summary.
# usage: run.sh ROOT AGENTS
ROOT=$(cd "$1" && pwd) AGENTS=$2
for P in bin/foo_app bin/bar_tool libexec/bar/deep/helper; do
  OUT=$(env HIP_STANDIN_AGENTS="$AGENTS" HIP_STANDIN_LOG=1 "$ROOT/$P" 2>&1)
  echo "== $P (exit $?)"
  echo "$OUT" | grep -E ' kpack | -> code object |^[A-Za-z<>]+: -?[0-9]+$|resolved|error' |
    sed -E "s|$ROOT|ROOT|g; s/ size [0-9]+ / /"
done
