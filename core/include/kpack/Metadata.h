//===- kpack/Metadata.h - HIPK kpack metadata (FORMAT.md §3.2) --*- C++ -*-===//
//
// The one codec of the msgpack map a HIPK wrapper points at:
//   {"kernel_name": str, "kpack_search_paths": [str, ...]}
// plus this project's optional "link_id": str (docs/format-extensions.md).
// Encoded with a fixed key order (deterministic bytes). Decoded without
// exceptions and without reading past the bytes it is given; the loader, the
// registration shim and the stand-in runtime decode in Loader mode, so they
// accept and reject the same maps, and the tools verify in Strict mode.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_METADATA_H
#define KPACK_METADATA_H

#include "kpack/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kpack {

/// Upstream's runtime reads at most this many bytes at the wrapper pointer;
/// the encoder refuses larger maps and the loader never reads more.
constexpr size_t MaxKpackMetadataSize = 64 * 1024;

struct KpackMetadata {
  std::string KernelName;               ///< TOC key prefix: "<name>#<N>"
  std::vector<std::string> SearchPaths; ///< may contain @GFXARCH@
  /// The link identity (docs/format-extensions.md, "Link identity"): 32
  /// lowercase hex digits, or empty when the map has none. Written as the
  /// extra key "link_id" after the other two.
  std::string LinkId{};
};

/// The key of the link identity in a binary's metadata map and in the
/// per-entry "metadata" map of the archive entries written for it.
constexpr const char *LinkIdKey = "link_id";

/// The loader's rule for a binary and an archive entry found for it: the
/// entry is stale (written by another link of the binary) when both carry a
/// link identity and they differ. Missing on either side: no check (inputs
/// written by upstream's tools).
inline bool isStaleEntry(std::string_view BinaryLinkId,
                         std::string_view EntryLinkId) {
  return !BinaryLinkId.empty() && !EntryLinkId.empty() &&
         BinaryLinkId != EntryLinkId;
}

/// What a reader insists on beyond both keys with the right types and at
/// least one search path (unknown keys are always ignored).
enum class MetadataMode {
  /// What every runtime-side reader accepts: non-string keys are skipped and
  /// a repeated key's last value wins, but the kernel name and every search
  /// path must be non-empty, since nothing could be loaded with them.
  Loader,
  /// The tools' verification: keys must be strings and appear once; empty
  /// strings are reported as they are.
  Strict,
};

/// Encodes the map, "kernel_name" first. Fails if the result would exceed
/// MaxKpackMetadataSize or there is no search path.
Status encodeKpackMetadata(const KpackMetadata &M, std::vector<uint8_t> &Out);

/// Decodes the map at the start of Bytes, reading at most min(Size,
/// MaxKpackMetadataSize) bytes; trailing bytes after the map are ignored.
/// Consumed (if given) receives the size of the map. Every failure is
/// KPACK_ERROR_INVALID_METADATA (KPACK_ERROR_OUT_OF_MEMORY on exhaustion).
Status decodeKpackMetadata(const uint8_t *Bytes, size_t Size,
                           KpackMetadata &Out,
                           MetadataMode Mode = MetadataMode::Strict,
                           size_t *Consumed = nullptr);

/// Decodes the metadata a HIPK wrapper of this process points at, whose size
/// nobody states: the parse is bounded by the bytes actually readable at
/// Address (kpack/ReadableMemory.h), never more than MaxKpackMetadataSize.
/// An address with nothing readable is KPACK_ERROR_INVALID_METADATA.
Status decodeKpackMetadataInMemory(const void *Address, KpackMetadata &Out,
                                   MetadataMode Mode = MetadataMode::Loader);

} // namespace kpack

#endif
