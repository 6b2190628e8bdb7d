#!/bin/bash
# Rewrites an archive's keys as a broken splitter would have written them:
# every entry is extracted and packed again (group and family kept) under the
# key SED_EXPR makes of its key; an entry whose key becomes empty is left out.
# usage: rekey.sh ARCHIVE SED_EXPR
set -euo pipefail
A=$1 EXPR=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
GROUP=$(kpack ls "$A" | sed -n 's/^group: *//p')
FAMILY=$(kpack ls "$A" | sed -n 's/^family: *//p')
ARGS=()
I=0
while read -r KEY ARCH _; do
  NEW=$(sed -e "$EXPR" <<< "$KEY")
  I=$((I + 1))
  [ -n "$NEW" ] || continue
  kpack extract "$A" "$KEY" "$ARCH" -o "$W/$I.co"
  ARGS+=("$NEW:$ARCH=$W/$I.co")
done < <(kpack ls "$A" | sed -n '/^KEY /,/^total:/p' | sed '1d;$d')
kpack pack -o "$W/new.kpack" --group "$GROUP" --family "$FAMILY" "${ARGS[@]}" > /dev/null
mv "$W/new.kpack" "$A"
