//===- kpack/SharedSegments.h - Content shared across code objects -*- C++ -*-===//
//
// The analysis behind the "zstd-shared-segments" scheme (format version 2,
// docs/format-extensions.md). Code objects are cut into content-defined
// chunks; a chunk found in several code objects of an archive is shared
// content. Shared chunks contained in exactly the same set of code objects
// form one segment, stored once per archive; each code object is then one
// zstd frame compressed against the concatenation of the segments that hold
// its shared content, so that it decodes alone, given those segments only.
//
// Grouping by the exact set of code objects keeps a load cheap: a code object
// never needs a segment that holds content it does not contain, so the
// segments it decodes are no larger than its own shared content.
//
// Memory is bounded by SharedSegmentLimits: a table of the distinct chunks
// (16 bytes each, at most MaxChunks) and the shared bytes (at most
// MaxSharedBytes). Past either bound, content first seen later is not shared;
// the result stays deterministic for a given sequence of code objects.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SHAREDSEGMENTS_H
#define KPACK_SHAREDSEGMENTS_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace kpack {

/// A content-defined chunk of one code object.
struct ContentChunk {
  uint64_t Hash = 0;
  uint64_t Offset = 0;
  uint32_t Size = 0;
};

/// Cuts Data into chunks whose boundaries depend only on the bytes around
/// them (a gear rolling hash; 64 B to 4 KiB, about 0.6 KiB on average), so
/// equal content at different offsets yields equal chunks. Thread-safe.
std::vector<ContentChunk> chunkContent(const uint8_t *Data, size_t Size);

struct SharedSegmentLimits {
  /// Segments smaller than this are dropped (their content stays in the
  /// code objects): a frame of its own and a longer prefix are not worth it.
  uint64_t MinSegmentBytes = 4096;
  /// Larger segments are split, so that they compress in parallel and a
  /// reader decodes and caches them in pieces.
  uint64_t MaxSegmentBytes = uint64_t(8) << 20;
  /// Shared content kept (memory bound of the analysis).
  uint64_t MaxSharedBytes = uint64_t(256) << 20;
  /// Distinct chunks indexed (memory bound of the analysis).
  uint64_t MaxChunks = uint64_t(1) << 22;
};

/// The segments of one archive and, per code object, the ones it uses.
/// Segments are runs of one buffer of shared bytes, so that the analysis
/// never holds the shared content twice.
class SharedSegments {
public:
  /// A run of Content.
  struct Range {
    uint64_t Offset = 0, Size = 0;
  };

  size_t size() const { return Segments.size(); }
  uint64_t segmentSize(uint32_t S) const { return Sizes[S]; }
  /// Segment S's bytes.
  void segment(uint32_t S, std::vector<uint8_t> &Out) const;
  /// The prefix of a frame: the concatenation of the segments in List.
  void concatenate(const std::vector<uint32_t> &List,
                   std::vector<uint8_t> &Out) const;
  /// The segments item I (an id given to SharedContentIndex::add) is
  /// compressed against, ascending; empty for items not added or sharing
  /// nothing.
  const std::vector<uint32_t> &itemSegments(size_t I) const;
  /// Frees the content (the segment list and sizes stay).
  void releaseContent();

private:
  friend class SharedContentIndex;
  std::vector<uint8_t> Content;
  std::vector<std::vector<Range>> Segments;
  std::vector<uint64_t> Sizes;
  std::vector<std::vector<uint32_t>> ItemSegments;
};

/// Builds the segments of one archive from its code objects, added one at a
/// time. The result depends only on the sequence of add calls.
class SharedContentIndex {
public:
  explicit SharedContentIndex(SharedSegmentLimits Limits = {});
  ~SharedContentIndex();
  SharedContentIndex(SharedContentIndex &&) noexcept;
  SharedContentIndex &operator=(SharedContentIndex &&) noexcept;

  /// Records code object Item (each id at most once) with its bytes and
  /// chunkContent(Data, Size). Bytes of chunks found shared are copied.
  void add(uint32_t Item, const uint8_t *Data,
           const std::vector<ContentChunk> &Chunks);

  /// The segments, for items 0..NumItems-1 (NumItems above every item id
  /// added).
  SharedSegments finish(size_t NumItems);

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace kpack

#endif
