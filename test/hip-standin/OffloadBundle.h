//===- OffloadBundle.h - Minimal clang offload-bundle reader ----*- C++ -*-===//
//
// The stand-in HIP runtime's own reader for what a HIPF wrapper points to:
// an uncompressed clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__") or a
// compressed one ("CCOB", versions 1 to 3, zlib or zstd). Independent of the
// project's bundle codec (lib/format), so that the stand-in checks what the
// tools write instead of re-reading it with the same code. Every read is
// bounded by the size given; malformed input yields a message.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_HIP_STANDIN_OFFLOADBUNDLE_H
#define KPACK_HIP_STANDIN_OFFLOADBUNDLE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hipstandin {

struct OffloadBundle {
  struct Entry {
    std::string Id;                ///< e.g. "hipv4-amdgcn-amd-amdhsa--gfx1100"
    uint64_t Offset = 0, Size = 0; ///< within Bytes
  };
  bool Compressed = false;
  unsigned CcobVersion = 0; ///< 1..3 if Compressed
  std::string Compression;  ///< "zlib" or "zstd" if Compressed
  /// The uncompressed bundle (a copy, so that it outlives the input), or
  /// empty when only the header was read (then the payloads are at Source).
  std::vector<uint8_t> Bytes;
  const uint8_t *Source = nullptr;
  std::vector<Entry> Entries;

  const uint8_t *payload(const Entry &E) const {
    return (Source ? Source : Bytes.data()) + E.Offset;
  }
};

/// Reads the bundle at Data; Size bounds every read (the bundle may be
/// shorter: the rest is ignored). Returns "" or an error message. With
/// HeaderOnly an uncompressed bundle is read as CLR's comgr lookup reads it:
/// the entry table only, payloads left where they are (Source); a compressed
/// one is always decompressed whole, as CLR does.
std::string readOffloadBundle(const uint8_t *Data, size_t Size,
                              OffloadBundle &Out, bool HeaderOnly = false);

} // namespace hipstandin

#endif
