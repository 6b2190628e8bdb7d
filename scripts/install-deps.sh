#!/usr/bin/env bash
# Installs everything the build, the demo and the test suite need on Debian 12
# (all from Debian's own archive). Idempotent; needs root (or sudo). CMake
# looks up every program and file the tests use and names the package here
# that provides a missing one (cmake/KpackPrograms.cmake, docs/testing.md).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
PKGS=(
  cmake ninja-build make pkg-config gcc g++ python3 python3-psutil
  clang-22 clang-tools-22 lld-22 llvm-22 llvm-22-dev llvm-22-tools libclang-22-dev liblld-22-dev libclang-rt-22-dev
  libzstd-dev zstd libmsgpack-cxx-dev zlib1g-dev libgtest-dev
  # Wheels: zips (libzip) and RECORD hashes (OpenSSL's EVP).
  libzip-dev libssl-dev
  binutils elfutils gdb diffutils time patchelf
  # Wheel tests: a fresh venv and pip install of local wheels only.
  python3-venv python3-pip
  # Real ROCm fat binaries and HIP runtime used as test inputs.
  librocrand1 librocsparse0 libamdhip64-5 libamdhip64-dev rocm-device-libs
  # Windows: PE/COFF programs and DLLs (mingw-w64) run under wine (docs/windows.md).
  # zlib for the Windows stand-in's compressed bundles.
  mingw-w64 wine wine64 libz-mingw-w64-dev
  # Unpacking the libzstd source package below.
  xz-utils
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# zstd for the Windows DLL: Debian has no mingw-w64 build of it, so the
# Windows build compiles Debian's own libzstd source package, fetched once
# with apt (cmake/windows/get-zstd-source.sh).
$SUDO bash "$(dirname "$0")/../cmake/windows/get-zstd-source.sh"
