# Sourced by bench/therock/run.sh and cpu-profile.sh: the unsplit TheRock
# artifact both measure.
# make_unsplit_artifact DIR LIB: DIR/artifact_manifest.txt and one prefix per
# library (TheRock stages every subproject in its own stage directory), with
# librocsparse and librocrand from LIB and their soname links.
make_unsplit_artifact() {
  local A=$1 LIB=$2 p proj file soname d
  for p in rocSPARSE:librocsparse.so.0.1:librocsparse.so.0 rocRAND:librocrand.so.1.1:librocrand.so.1; do
    IFS=: read -r proj file soname <<< "$p"
    d=$A/math-libs/$proj/stage/lib
    mkdir -p "$d"
    cp --preserve=mode,timestamps "$LIB/$file" "$d/$file"
    ln -s "$file" "$d/$soname"
    ln -s "$soname" "$d/${soname%.*}"
  done
  printf 'math-libs/rocSPARSE/stage\nmath-libs/rocRAND/stage\n' > "$A/artifact_manifest.txt"
}
