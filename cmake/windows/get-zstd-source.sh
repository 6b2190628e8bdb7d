#!/usr/bin/env bash
# Fetches zstd's sources for the Windows build (cmake/windows): mingw-w64 has
# no zstd package in Debian 12, so the DLL links a static zstd built from
# Debian's own source package (libzstd 1.5.4+dfsg2), fetched with apt-get
# through a private source list (the machine's apt configuration is left as
# it is) and unpacked to DEST (default /usr/local/src/zstd-1.5.4).
set -euo pipefail
DEST=${1:-/usr/local/src/zstd-1.5.4}
if [ -f "$DEST/lib/zstd.h" ]; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" > "$work/src.list"
opts=(-o "Dir::Etc::SourceList=$work/src.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$work/lists")
apt-get "${opts[@]}" update -qq
(cd "$work" && apt-get "${opts[@]}" source --download-only libzstd=1.5.4+dfsg2-5 -qq)
mkdir -p "$(dirname "$DEST")"
tar -C "$work" -xf "$work"/libzstd_1.5.4+dfsg2.orig.tar.xz
rm -rf "$DEST"
mv "$work"/zstd-1.5.4 "$DEST"
echo "zstd sources in $DEST"
