//===- kpack/ArchiveWriter.h - Writes .kpack archives -----------*- C++ -*-===//
//
// Writes the archive of FORMAT.md §1 in a form upstream's reader loads, plus
// the per-entry frame-offset extension (docs/format-extensions.md), per-entry
// TOC metadata maps (FORMAT.md §1.2) and deduplication by ordinal aliasing:
// entries with identical bytes share one stored blob, i.e. several TOC
// entries carry the same ordinal, which upstream's reader follows.
//
// Opt-in, the "zstd-shared-segments" scheme of format version 2, which
// upstream readers refuse (docs/format-extensions.md).
//
// The writer streams: entries are recorded as sources (bytes, a file range or
// a callback) and their bytes are produced only while write() runs, within a
// memory budget (kpack/WriteSchedule.h), so memory stays proportional to the
// TOC (plus, for the shared-segments scheme, the bounded analysis of
// kpack/SharedSegments.h). Compression runs on a thread pool without
// barriers; the output does not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ARCHIVEWRITER_H
#define KPACK_ARCHIVEWRITER_H

#include "kpack/Error.h"
#include "kpack/SharedSegments.h"

#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kpack {

class AtomicFile;
class FrameCache;

/// A TOC entry's "metadata" map (FORMAT.md §1.2): string values, written in
/// this order.
using EntryMetadata = std::vector<std::pair<std::string, std::string>>;

enum class ArchiveCompression {
  None,          ///< "none"
  ZstdPerKernel, ///< "zstd-per-kernel"
  /// "zstd-per-kernel" for release builds: each frame's window spans its
  /// whole code object (at most 128 MiB, the limit every zstd decoder
  /// accepts by default) and long-distance matching is on. Upstream readers
  /// decode it like any zstd-per-kernel archive.
  ZstdPerKernelLong,
  /// "zstd-shared-segments" (format version 2): one zstd frame per code
  /// object, compressed against the content it shares with other code
  /// objects, stored once as segments (kpack/SharedSegments.h).
  ZstdSharedSegments
};

/// The TOC string for a scheme.
const char *compressionSchemeName(ArchiveCompression C);
/// The header and TOC format version a scheme is written with (1 or 2).
uint32_t archiveFormatVersion(ArchiveCompression C);
/// The zstd levels of the schemes unless told otherwise, the one
/// definition every writer and every --level help uses: DefaultZstdLevel
/// (upstream's) for zstd-per-kernel, the default scheme of every writer;
/// ReleaseZstdLevel for the release grade; SharedSegmentsZstdLevel for
/// shared segments (where loads stay as fast as level-3 frames;
/// docs/benchmarks.md).
constexpr int DefaultZstdLevel = 3;
constexpr int ReleaseZstdLevel = 19;
constexpr int SharedSegmentsZstdLevel = 9;
/// The default memory budget of a write (ArchiveWriterOptions::BatchBytes).
constexpr uint64_t MinBatchBytes = uint64_t(64) << 20;
constexpr uint64_t BatchBytesPerThread = uint64_t(8) << 20;
/// Whether identical code objects are stored once (ordinal aliasing, which
/// upstream readers follow) unless a writer is told otherwise: the one
/// default of ArchiveWriterOptions::Deduplicate and of the emission
/// library's EmissionLayout::DeduplicateIdentical.
constexpr bool DefaultDeduplicate = true;
/// The zstd level scheme C uses unless told otherwise (0 for "none").
int defaultZstdLevel(ArchiveCompression C);

/// The buffers a reader of sources reuses from one read to the next. File
/// ranges are appended to Range (never zero-filled first), so that a reader
/// can keep the bytes of several reads there and drop (truncate) the rest;
/// callbacks produce into Produced, replacing what it held.
struct ReadBuffers {
  llvm::SmallVector<uint8_t, 0> Range;
  std::vector<uint8_t> Produced;

  /// Whether P (a read's view) points into these buffers.
  bool holds(const uint8_t *P) const {
    return P && ((P >= Range.data() && P < Range.data() + Range.size()) ||
                 P == Produced.data());
  }
  /// Exchanges the buffers themselves: views into either stay valid.
  /// (SmallVector::swap copies the elements when one side is empty.)
  void swap(ReadBuffers &Other) {
    llvm::SmallVector<uint8_t, 0> Mine = std::move(Range);
    Range = std::move(Other.Range);
    Other.Range = std::move(Mine);
    Produced.swap(Other.Produced);
  }
};

/// Where an entry's bytes come from. Sources are read during write(): once,
/// twice for the shared-segments scheme (its analysis, then compression).
class EntrySource {
public:
  using Producer = std::function<Status(std::vector<uint8_t> &Out)>;
  /// A check of the bytes a read produced (e.g. "is a code object for this
  /// target"); its error is the read's.
  using Check = std::function<Status(const uint8_t *Data, size_t Size)>;

  /// Bytes owned by the caller, who keeps them alive until write() returns.
  static EntrySource fromBytes(const uint8_t *Data, size_t Size);
  /// Bytes owned by the source.
  static EntrySource fromOwnedBytes(std::vector<uint8_t> Bytes);
  /// Size bytes at Offset in the file at Path.
  static EntrySource fromFileRange(std::string Path, uint64_t Offset,
                                   uint64_t Size);
  /// Bytes made on demand (e.g. decompressing a bundle). SizeHint, if known,
  /// only helps batching. WillRead, if set, is what willRead() calls.
  static EntrySource fromCallback(Producer P, uint64_t SizeHint = 0,
                                  std::function<void()> WillRead = {});
  /// This source, with C run on the bytes of every read (after any check
  /// it had; the bytes are not copied for it), and every error of a read
  /// prefixed with "Origin: " when Origin is not empty.
  EntrySource checkedBy(Check C, std::string Origin = {}) const;

  /// Size if known before reading (0 for callbacks without a hint).
  uint64_t sizeHint() const { return Size; }
  /// Whether a read puts the bytes in the reader's buffers (file ranges,
  /// callbacks) rather than pointing at bytes held elsewhere.
  bool readsIntoBuffers() const {
    return K == Kind::FileRange || K == Kind::Callback;
  }
  /// Produces the bytes: View points at them, in Bufs or (for bytes the
  /// source holds) elsewhere, until the next read into Bufs.
  Status read(ReadBuffers &Bufs, const uint8_t *&View, size_t &ViewSize) const;
  /// Announces one read() to come: a writer calls it for every source of a
  /// pass before that pass reads any, so that sources sharing state (the
  /// entries of one compressed bundle, decoded once) can drop that state
  /// after the last announced read, whichever entries were left out.
  void willRead() const {
    if (WillRead)
      WillRead();
  }

private:
  Status produce(ReadBuffers &Bufs, const uint8_t *&View,
                 size_t &ViewSize) const;

  enum class Kind { View, Owned, FileRange, Callback } K = Kind::View;
  const uint8_t *Data = nullptr;
  uint64_t Offset = 0, Size = 0;
  std::shared_ptr<const std::vector<uint8_t>> Owned;
  std::string Path;
  Producer Make;
  std::function<void()> WillRead;
  Check Checked;
  std::string Origin;
};

struct ArchiveWriterOptions {
  std::string GroupName;     ///< TOC "group_name"
  /// TOC "gfx_arch_family"; empty means defaultArchFamily() of the arches.
  std::string GfxArchFamily;
  ArchiveCompression Compression = ArchiveCompression::ZstdPerKernel;
  int ZstdLevel = DefaultZstdLevel;
  /// Compression threads; 0 means the threads this process may use
  /// (llvm::hardware_concurrency(): CPU affinity and cgroup limits).
  unsigned Threads = 0;
  /// The memory budget of a write (kpack/WriteSchedule.h): the bytes the
  /// writer holds in its own buffers at once, code objects it read and
  /// results not yet written, beyond one entry per thread (a single larger
  /// entry is still processed, alone). 0: max(MinBatchBytes,
  /// BatchBytesPerThread x threads), so that many threads are not starved.
  uint64_t BatchBytes = 0;
  /// Write "frame_offset"/"frame_size" in zstd entries (extension; upstream
  /// readers ignore them).
  bool FrameOffsets = true;
  /// Entries with identical bytes are stored once: their TOC entries share
  /// the ordinal of the first one. A hash match is confirmed by comparing the
  /// bytes (the stored blob is read back), so different bytes never merge.
  bool Deduplicate = DefaultDeduplicate;
  /// A source's error is reported as "<key> (<arch>): <message>"; false: as
  /// the source words it (sources whose messages name their entry).
  bool NameEntriesInErrors = true;
  /// Bounds of the shared-segments analysis.
  SharedSegmentLimits SharedLimits = {};
  /// Frames of zstd-per-kernel entries (either grade) are taken from and
  /// kept in this cache (kpack/FrameCache.h); the archive is the same
  /// without it.
  std::shared_ptr<FrameCache> Cache = nullptr;
  /// Each entry's bytes are hashed (llvm::xxh3_64bits) as they are read,
  /// for digest() in writeArchives' BeforeTocs (the link identity).
  bool EntryDigests = false;
};

/// What write() reports about the archive it wrote.
struct ArchiveWriteStats {
  uint64_t Entries = 0;
  uint64_t OriginalBytes = 0; ///< sum of code-object sizes
  uint64_t FileBytes = 0;     ///< archive size
  uint64_t Deduplicated = 0;  ///< entries stored as aliases of an earlier one
  uint64_t SharedSegments = 0; ///< shared-segments scheme: segments stored
  uint64_t SharedBytes = 0;    ///< their original size
  uint64_t SharedStoredBytes = 0; ///< their compressed size
};

/// The family an archive gets when none is given: its only arch, or "multi".
std::string defaultArchFamily(const std::vector<std::string> &Arches);

class ArchiveWriter {
public:
  explicit ArchiveWriter(ArchiveWriterOptions Opts);

  /// Records an entry. Ordinals follow the order of the calls (with
  /// Deduplicate, the order of first occurrence of each distinct content).
  /// Fails on an empty key or arch, or a (Key, Arch) pair added before.
  Status addEntry(const std::string &Key, const std::string &Arch,
                  EntrySource Source, EntryMetadata Metadata = {});

  size_t size() const { return Entries.size(); }
  /// Entry I (in addEntry order): its key, arch and, with EntryDigests,
  /// once its bytes have been read, their xxh3_64bits.
  const std::string &key(size_t I) const { return Entries[I].Key; }
  const std::string &arch(size_t I) const { return Entries[I].Arch; }
  uint64_t digest(size_t I) const { return Entries[I].Digest; }
  /// Sets Name in entry I's metadata map (replacing a value it had); until
  /// the TOC is written.
  void setMetadata(size_t I, const std::string &Name, std::string Value);
  /// The distinct arches added so far, sorted (what gfx_arches will list).
  std::vector<std::string> arches() const;

  /// Options may be adjusted until write(), e.g. a family derived from the
  /// arches of the entries.
  ArchiveWriterOptions &options() { return Opts; }

  /// Reads every source, writes the archive atomically to Path. On failure
  /// Path is left as it was.
  Status write(const std::string &Path, ArchiveWriteStats *Stats = nullptr);

  /// One archive of writeArchives().
  struct Job {
    ArchiveWriter *Writer = nullptr;
    std::string Path;
    ArchiveWriteStats Stats; ///< filled on success
  };
  /// Writes several archives in one pass. Sources are read in the order
  /// Order gives, as (index into Jobs, entry index in that writer) pairs
  /// naming every entry once (empty: job by job), so that sources sharing
  /// state, e.g. the entries of one compressed bundle spread over per-target
  /// archives, are read close together and that state is short-lived.
  /// Threads and BatchBytes are the first job's. The archives are committed
  /// together (commitTogether) once all of them have been written: a
  /// failure leaves none and changes no existing file. With Uncommitted,
  /// they are not committed but handed over, finished, in job order, for
  /// the caller to commit with its other outputs. BeforeTocs, if given, runs
  /// once every entry has been read and before any TOC is written: it may
  /// set entries' metadata from their digests.
  using TocHook = std::function<Status(std::vector<Job> &Jobs)>;
  static Status
  writeArchives(std::vector<Job> &Jobs,
                const std::vector<std::pair<size_t, size_t>> &Order = {},
                std::vector<std::unique_ptr<AtomicFile>> *Uncommitted = nullptr,
                const TocHook &BeforeTocs = {});

private:
  struct Entry {
    std::string Key, Arch;
    EntrySource Source;
    EntryMetadata Metadata;
    uint64_t OriginalSize = 0;
    uint64_t Ordinal = 0; ///< index into the stored blobs
    uint64_t Digest = 0;  ///< EntryDigests: xxh3_64bits of the bytes
  };
  /// A stored blob (one per distinct content with Deduplicate), or a shared
  /// segment.
  struct Blob {
    uint64_t Offset = 0; ///< "none": the bytes; zstd: the u32 size prefix
    uint64_t Size = 0;   ///< "none": the bytes; zstd: the frame
    uint64_t OriginalSize = 0;
    std::vector<uint32_t> Segments; ///< shared segments it is compressed against
  };
  struct Output;
  ArchiveWriterOptions Opts;
  std::vector<Entry> Entries;
  // TOC keys in first-use order, each with its entries in insertion order.
  std::vector<std::vector<size_t>> KeyEntries;
  std::map<std::string, size_t> KeyIndex; // key -> index into KeyEntries

  /// The TOC of output O (WriterToc.cpp).
  std::vector<uint8_t> buildToc(const Output &O, uint64_t KernelEnd) const;
  /// The shared-segments analysis of every such output (a first pass over
  /// the sources), then their segments written (WriterSharedSegments.cpp).
  static Status writeSharedSegments(
      std::vector<Job> &Jobs,
      const std::vector<std::pair<size_t, size_t>> &Sequence,
      std::vector<std::unique_ptr<Output>> &Outs);
  /// The pass that reads, compresses and places every code object
  /// (WriterFrames.cpp).
  static Status writeFrames(
      std::vector<Job> &Jobs,
      const std::vector<std::pair<size_t, size_t>> &Sequence,
      std::vector<std::unique_ptr<Output>> &Outs);
};

} // namespace kpack

#endif
