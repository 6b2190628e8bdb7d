//===- kpack/ContentHash.h - A fast 64-bit content hash ---------*- C++ -*-===//
//
// Finds candidate equal byte ranges: duplicate code objects (the writer's
// deduplication) and shared chunks (kpack/SharedSegments.h). Users never rely
// on it alone for correctness: a match is confirmed by comparing bytes, or a
// false match only costs compression ratio.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_CONTENTHASH_H
#define KPACK_CONTENTHASH_H

#include <cstddef>
#include <cstdint>

namespace kpack {

/// Four lanes over 8-byte words, then the tail bytewise and a final
/// avalanche. Deterministic across hosts of the same byte order.
uint64_t contentHash(const uint8_t *Data, size_t Size);

} // namespace kpack

#endif
