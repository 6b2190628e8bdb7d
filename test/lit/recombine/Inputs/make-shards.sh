#!/bin/bash
# make-shards.sh DIR: three CI shards of split artifacts (FORMAT.md §5) under
# DIR/shards and upstream's configuration in DIR/config.json.
#   gfx110X (primary): blas_lib_generic, blas_lib_gfx1100, blas_lib_gfx1101
#                      (archive + Tensile database file each), fft_lib_generic
#                      (a component without device code)
#   gfx120X:           blas_lib_generic (same as the primary's),
#                      blas_lib_gfx1200 (archive + a database directory whose
#                      file names carry no target)
#   gfx90X:            blas_lib_generic, blas_lib_gfx90a:xnack+ and
#                      blas_lib_gfx90a:xnack-
# Times are fixed so that copies can be compared with the inputs.
set -euo pipefail
root=$1
rm -rf "$root"
mkdir -p "$root/shards"
cd "$root"
blas=math-libs/BLAS/stage

generic() { # shard
  local a=shards/$1/blas_lib_generic
  mkdir -p "$a/$blas/lib" "$a/$blas/bin" "$a/$blas/share/doc/empty"
  printf 'host library\n' > "$a/$blas/lib/librocblas.so.4.0"
  ln -s librocblas.so.4.0 "$a/$blas/lib/librocblas.so.4"
  ln -s librocblas.so.4 "$a/$blas/lib/librocblas.so"
  printf '#!/bin/sh\n' > "$a/$blas/bin/rocblas-bench"
  chmod 755 "$a/$blas/bin/rocblas-bench"
  echo "$blas" > "$a/artifact_manifest.txt"
}

target() { # shard target [database file relative to the prefix]
  local a=shards/$1/blas_lib_$2
  mkdir -p "$a/$blas/.kpack"
  printf 'code object for %s\n' "$2" > "$root/co"
  kpack pack -o "$a/$blas/.kpack/blas_lib_$2.kpack" --compression none \
    "$blas/lib/librocblas.so.4.0#0:$2=$root/co" > /dev/null
  if [ $# -gt 2 ]; then
    mkdir -p "$(dirname "$a/$blas/$3")"
    printf 'database for %s\n' "$2" > "$a/$blas/$3"
  fi
  echo "$blas" > "$a/artifact_manifest.txt"
}

generic gfx110X
target gfx110X gfx1100 lib/rocblas/library/TensileLibrary_gfx1100.co
target gfx110X gfx1101 lib/rocblas/library/TensileLibrary_gfx1101.co
mkdir -p shards/gfx110X/fft_lib_generic/math-libs/FFT/stage/lib
printf 'fft\n' > shards/gfx110X/fft_lib_generic/math-libs/FFT/stage/lib/librocfft.so
echo math-libs/FFT/stage > shards/gfx110X/fft_lib_generic/artifact_manifest.txt

generic gfx120X
target gfx120X gfx1200 lib/aotriton/kernels/gfx1200/attn_fwd.hsaco

generic gfx90X
target gfx90X gfx90a:xnack+
target gfx90X gfx90a:xnack-
rm -f co

find shards -exec touch -h -d '2024-01-02 03:04:05.123456789' {} +

cat > config.json <<'JSON'
{
  "primary_shard": "gfx110X",
  "architecture_groups": {
    "gfx110X": {"display_name": "RDNA3", "architectures": ["gfx1100", "gfx1101"]},
    "gfx120X": {"display_name": "RDNA4", "architectures": ["gfx1200"]},
    "gfx90X": {"display_name": "CDNA2", "architectures": ["gfx90a"]}
  },
  "validation": {
    "error_on_duplicate_device_code": true,
    "verify_generic_artifacts_match": false,
    "error_on_missing_architecture": false
  }
}
JSON
