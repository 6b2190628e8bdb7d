//===- kpack/Metadata.h - HIPK kpack metadata (FORMAT.md §3.2) --*- C++ -*-===//
//
// The msgpack map a HIPK wrapper points at:
//   {"kernel_name": str, "kpack_search_paths": [str, ...]}
// Encoded with a fixed key order (deterministic bytes); decoded with full
// validation and without exceptions by the runtime's parser
// (kpack/HipkReference.h), so that the tools read it as the loader does.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_METADATA_H
#define KPACK_METADATA_H

#include "kpack/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kpack {

/// Upstream's runtime reads at most this many bytes at the wrapper pointer.
constexpr size_t MaxKpackMetadataSize = 64 * 1024;

struct KpackMetadata {
  std::string KernelName;               ///< TOC key prefix: "<name>#<N>"
  std::vector<std::string> SearchPaths; ///< may contain @GFXARCH@
};

/// Encodes the map, "kernel_name" first. Fails if the result would exceed
/// MaxKpackMetadataSize or there is no search path.
Status encodeKpackMetadata(const KpackMetadata &M, std::vector<uint8_t> &Out);

/// Decodes the map at the start of Bytes; at most MaxKpackMetadataSize bytes
/// are looked at, trailing bytes after the map are ignored. Consumed (if
/// given) receives the size of the map. Both keys are required, with the
/// right types and at least one search path; unknown keys are ignored.
Status decodeKpackMetadata(const uint8_t *Bytes, size_t Size,
                           KpackMetadata &Out, size_t *Consumed = nullptr);

} // namespace kpack

#endif
