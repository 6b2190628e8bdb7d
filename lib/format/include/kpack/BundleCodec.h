//===- kpack/BundleCodec.h - Clang offload bundles (FORMAT.md §2) -*- C++ -*-===//
//
// The one offload-bundle codec of the project: reads uncompressed bundles and
// CCOB v1/v2/v3 (zlib and zstd) and splits a .hip_fatbin section holding
// several bundles. Writing uncompressed bundles is core's (kpack/BundleWriter.h,
// included here). No LLVM dependency.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_BUNDLECODEC_H
#define KPACK_BUNDLECODEC_H

#include "kpack/BundleWriter.h"
#include "kpack/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kpack {

/// One entry of an uncompressed bundle.
struct BundleEntry {
  std::string Id;       ///< e.g. "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
  std::string Kind;     ///< "hipv4", "hip", "host", ...
  std::string Triple;   ///< "amdgcn-amd-amdhsa" (empty env part dropped)
  std::string TargetId; ///< "gfx90a:xnack+"; empty for the host entry
  uint64_t Offset = 0;  ///< payload offset from the start of the uncompressed bundle
  uint64_t Size = 0;    ///< payload size
  bool isDevice() const { return Kind != "host"; }
};

enum class BundleCompression { None, Zlib, Zstd };

/// A decoded bundle. Payloads are views into Data.
struct Bundle {
  uint64_t SectionOffset = 0; ///< where the bundle starts in the section
  uint64_t EncodedSize = 0;   ///< bytes it occupies there (compressed size for CCOB)
  BundleCompression Compression = BundleCompression::None;
  unsigned CcobVersion = 0;   ///< 1, 2, 3 for CCOB; 0 if uncompressed
  std::vector<uint8_t> Data;  ///< the uncompressed bundle bytes
  std::vector<BundleEntry> Entries;

  const uint8_t *payload(const BundleEntry &E) const { return Data.data() + E.Offset; }
  /// Device entries only (the host entry is always empty).
  std::vector<const BundleEntry *> deviceEntries() const;
};

/// Where a bundle lies in a section and what its header records, read
/// without decompressing or copying it (scanBundleSection).
struct BundleExtent {
  uint64_t SectionOffset = 0; ///< where the bundle starts in the section
  uint64_t EncodedSize = 0;   ///< bytes it occupies there
  BundleCompression Compression = BundleCompression::None;
  unsigned CcobVersion = 0;      ///< 1, 2, 3 for CCOB; 0 if uncompressed
  uint64_t UncompressedSize = 0; ///< CCOB header's; EncodedSize if uncompressed
  /// Uncompressed bundles only (a CCOB's entries are inside its compressed
  /// data); payload offsets are from SectionOffset.
  std::vector<BundleEntry> Entries;
};

/// True if Bytes start with an uncompressed bundle or a CCOB header.
bool isBundle(const uint8_t *Bytes, size_t Size);

/// Decodes the bundle at the start of Bytes (uncompressed or CCOB). For
/// uncompressed bundles EncodedSize is the end of the last payload (or of the
/// header when all payloads are empty); for CCOB v1, which records no total
/// size, it is found by decompressing.
Status decodeBundle(const uint8_t *Bytes, size_t Size, Bundle &Out);

/// Splits a section holding one or more bundles, each starting at a multiple
/// of Align (4096 by clang) after the previous one; zero padding between
/// bundles is skipped. Only headers are read and checked, except that the
/// end of a CCOB v1 zlib stream (v1 records no total size) is found by
/// inflating it into a scratch buffer that is not kept.
Status scanBundleSection(const uint8_t *Bytes, size_t Size,
                         std::vector<BundleExtent> &Out,
                         uint64_t Align = 4096);

/// scanBundleSection, then decodes every bundle. SectionOffset is set on
/// each result.
Status decodeBundleSection(const uint8_t *Bytes, size_t Size,
                           std::vector<Bundle> &Out, uint64_t Align = 4096);

/// Splits "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+" into kind/triple/target.
Status parseBundleEntryId(const std::string &Id, BundleEntry &Out);

} // namespace kpack

#endif
