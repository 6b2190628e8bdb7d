//===- kpack/ArchiveReader.h - Lazy .kpack archive reader -------*- C++ -*-===//
//
// Reads a .kpack archive (docs/FORMAT.md §1, and format version 2 of
// docs/format-extensions.md): opening reads and validates the 16-byte header
// and the msgpack TOC only; reading an entry reads just that entry's bytes
// (one blob or one zstd frame), plus, for "zstd-shared-segments", the
// archive's segment index (read once, by the first load) and the shared
// segments the entry's frame is compressed against, each decoded once per
// archive by the first load that needs it and kept in a bounded cache. Safe on malformed input: every
// failure is an Status, never an exception, abort or out-of-bounds read.
//
// Thread safety: all const member functions may run concurrently; reads and
// decompression of different (or the same) entries proceed in parallel.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_RUNTIME_ARCHIVEREADER_H
#define KPACK_RUNTIME_ARCHIVEREADER_H

#include "kpack/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kpack {

class ByteSource;

class ArchiveReader {
public:
  enum class Scheme { None, ZstdPerKernel, ZstdSharedSegments };

  /// One code object: the TOC entry toc[Key][Arch].
  struct Entry {
    std::string Key;
    std::string Arch;
    uint64_t Ordinal = 0;
    uint64_t OriginalSize = 0;
    /// Stored (compressed) size when the TOC states it: the blob size for
    /// "none", the "frame_size" extension for zstd. See compressedSize().
    bool HasStoredSize = false;
    uint64_t StoredSize = 0;
    /// "none": blob offset. zstd with the frame extension: "frame_offset",
    /// the file offset of the u32 frame_size that precedes the frame.
    bool HasDataOffset = false;
    uint64_t DataOffset = 0;
    /// The entry's "metadata" map (FORMAT.md §1.2), its string-valued pairs
    /// in TOC order; other values are ignored like any unknown field.
    std::vector<std::pair<std::string, std::string>> Metadata;
    /// The metadata value of Name ("" when absent).
    std::string_view metadataValue(std::string_view Name) const {
      for (const auto &[K, V] : Metadata)
        if (K == Name)
          return V;
      return {};
    }
  };

  /// A shared segment ("zstd-shared-segments"): one zstd frame.
  struct Segment {
    uint64_t Offset = 0; ///< of the frame
    uint64_t Size = 0;   ///< of the frame
    uint64_t OriginalSize = 0;
  };

  /// Decoded segments kept per archive by default, least recently used
  /// dropped first: at most this many bytes of memory.
  static constexpr uint64_t SegmentCacheBytes = uint64_t(64) << 20;

  /// The largest TOC (the bytes from toc_offset to the end of the file) and
  /// the largest version-2 segment index a reader accepts: a longer one is
  /// INVALID_FORMAT before anything of its size is allocated
  /// (docs/format-extensions.md, "Size limits"). Real TOCs take KBs (about
  /// 100 bytes an entry: 16 MiB is over 100,000 entries); parsing one costs
  /// up to about 25 times its size (a msgpack object is 24 bytes, one TOC
  /// byte can be one), so this also bounds the memory of an open.
  static constexpr uint64_t MaxTocBytes = uint64_t(16) << 20;

  static Status open(const std::string &Path,
                       std::unique_ptr<ArchiveReader> &Out);
  /// Opens an archive held in memory (copied); used by fuzzers and tests.
  static Status openBytes(const void *Data, size_t Size,
                            std::unique_ptr<ArchiveReader> &Out);
  ~ArchiveReader();

  const std::string &groupName() const { return GroupName; }
  const std::string &gfxArchFamily() const { return GfxArchFamily; }
  /// The TOC's gfx_arches list, in archive order.
  const std::vector<std::string> &gfxArches() const { return GfxArches; }
  Scheme scheme() const { return CompressionScheme; }
  /// The header's format version: 1, or 2 for "zstd-shared-segments".
  uint32_t formatVersion() const { return FormatVersion; }
  /// "zstd-shared-segments": the shared segments and, per stored code object
  /// (ordinal), the ones its frame is compressed against.
  struct SegmentIndex {
    std::vector<Segment> Segments;
    /// Ordinal O's segments are Lists[ListStart[O] .. ListStart[O + 1]),
    /// ascending; ListStart has one element more than there are ordinals.
    std::vector<uint32_t> ListStart;
    std::vector<uint32_t> Lists;
  };
  /// The segment index (empty for other schemes), read and validated by the
  /// first call or the first load that needs it.
  Status segmentIndex(const SegmentIndex *&Out) const;
  /// The segments E's frame is compressed against, ascending (none for
  /// other schemes).
  Status entrySegments(const Entry &E, std::vector<uint32_t> &Out) const;
  /// Bytes of decoded segments to keep (SegmentCacheBytes unless set). Each
  /// kept segment is an allocation of its own; a segment larger than the
  /// limit is not kept (its load decodes it for itself). Segments in use by
  /// loads in flight live until those loads end, whether kept or not.
  void setSegmentCacheLimit(uint64_t Bytes);
  /// Bytes of decoded segments kept now.
  uint64_t cachedSegmentBytes() const;
  static const char *schemeName(Scheme S);
  uint64_t fileSize() const;

  /// All entries, sorted by (Key, Arch) bytewise.
  const std::vector<Entry> &entries() const { return Entries; }
  /// The distinct binary keys, sorted bytewise.
  const std::vector<std::string> &binaryNames() const { return BinaryNames; }
  /// Exact lookup of toc[Key][Arch]; null when absent.
  const Entry *find(std::string_view Key, std::string_view Arch) const;

  /// The stored size of E's data; for zstd archives without the frame
  /// extension this walks the frame-size chain once (cached).
  Status compressedSize(const Entry &E, uint64_t &Size) const;

  /// Reads and decompresses E. Allocate(n) must return a buffer of n bytes
  /// (or null on exhaustion); it is called once, after E's data was read and
  /// validated, with n == E.OriginalSize.
  Status read(const Entry &E,
                const std::function<void *(size_t)> &Allocate) const;
  Status read(const Entry &E, std::vector<uint8_t> &Out) const;

private:
  struct FrameLocation {
    uint64_t Offset; // of the u32 size prefix
    uint64_t Size;   // of the frame, excluding the prefix
  };
  struct FrameChain;
  struct Decoder;
  struct DecoderPool;
  struct SegmentCache;

  ArchiveReader();
  Status parse();
  Status parseToc(const char *Data, size_t Size);
  Status locateFrame(const Entry &E, FrameLocation &Loc) const;
  /// read() without its catch-all.
  Status readEntry(const Entry &E,
                   const std::function<void *(size_t)> &Allocate) const;
  Status walkFrameChain() const;
  Status decompressFrame(const Entry &E, const FrameLocation &Loc, Decoder &D,
                         const std::function<void *(size_t)> &Allocate,
                         const unsigned char *Prefix, size_t PrefixSize) const;
  /// The prefix a frame is compressed against: its segments (List), from
  /// the cache or decoded (and cached). Held keeps them alive while in use.
  Status prefixOf(const std::vector<uint32_t> &List, Decoder &D,
                  std::vector<std::shared_ptr<const unsigned char>> &Held,
                  const unsigned char *&Prefix, size_t &PrefixSize) const;
  /// Reads segment S's frame and checks it can expand to its original size.
  Status readSegmentFrame(uint32_t Index, const Segment &S,
                          std::vector<unsigned char> &Frame) const;

  std::unique_ptr<ByteSource> Source;
  std::string GroupName;
  std::string GfxArchFamily;
  std::vector<std::string> GfxArches;
  Scheme CompressionScheme = Scheme::None;
  uint32_t FormatVersion = 1;
  uint64_t ZstdOffset = 0;
  uint64_t ZstdSize = 0;
  uint64_t SharedOffset = 0;
  uint64_t SharedSize = 0;
  uint64_t SharedIndexOffset = 0;
  uint64_t SharedIndexSize = 0;
  std::vector<Entry> Entries;
  std::vector<std::string> BinaryNames;
  std::unique_ptr<FrameChain> Chain;
  std::unique_ptr<DecoderPool> Decoders;
  std::unique_ptr<SegmentCache> SegmentData;
};

} // namespace kpack

#endif
