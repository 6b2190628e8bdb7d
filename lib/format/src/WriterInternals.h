//===- WriterInternals.h - The archive writer's shared pieces ---*- C++ -*-===//
//
// What the phases of ArchiveWriter::writeArchives() share (private to
// lib/format): ArchiveWriter.cpp runs the phases; EntrySource.cpp reads the
// sources; WriterFrames.cpp compresses and places the code objects' frames;
// WriterSharedSegments.cpp is the shared-segments scheme's first pass;
// WriterToc.cpp writes the TOC and the segment index.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_FORMAT_WRITERINTERNALS_H
#define KPACK_FORMAT_WRITERINTERNALS_H

#include "kpack/ArchiveWriter.h"

#include "kpack/AtomicFile.h"
#include "kpack/TimeTrace.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/TimeProfiler.h"

#include <zstd.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

namespace kpack {
namespace writer {

constexpr char ArchiveMagic[4] = {'K', 'P', 'A', 'K'};
constexpr uint64_t BlobStart = 64;
/// Batching charge for a callback source that gave no size hint.
constexpr uint64_t UnknownSizeCharge = uint64_t(1) << 20;
constexpr size_t MaxBatchEntries = 1024;

/// The detail of an entry's --time-trace events (docs/benchmarks.md, "Time
/// traces"): "#<position in the pass> <bytes>", then what names the entry.
std::string traceDetail(size_t Position, uint64_t Bytes,
                        const std::string &Key = {},
                        const std::string &Arch = {});

/// The writer's byte buffers: not zero-filled when resized for overwrite.
using Bytes = llvm::SmallVector<uint8_t, 0>;

/// How one frame is compressed.
struct FrameParams {
  int Level = DefaultZstdLevel;
  /// Window over the whole input (prefix included) and long-distance
  /// matching; otherwise the level's defaults, as upstream's writer.
  bool Long = false;
  /// Set the window to cover prefix and input (shared segments).
  bool WholeWindow = false;
  /// Raw-content prefix the frame is compressed against (shared segments).
  const uint8_t *Prefix = nullptr;
  size_t PrefixSize = 0;
};

/// The largest window any frame gets: 2^27 (128 MiB), what zstd's
/// streaming decoders accept by default (ZSTD_WINDOWLOG_LIMIT_DEFAULT), so
/// that every decoder reads release-grade frames; single-pass decoders such
/// as upstream's ZSTD_decompressDCtx accept any window.
constexpr int MaxWindowLog = 27;
constexpr int MinWindowLog = 10; // ZSTD_WINDOWLOG_MIN

int windowLogFor(uint64_t Bytes);
Status zstdStatus(size_t Code);
Status compressFrame(ZSTD_CCtx *Ctx, const uint8_t *Data, size_t Size,
                     const FrameParams &FP, Bytes &Frame);
/// What, besides a code object's bytes, its frame depends on: the
/// FrameCache salt of frames made with FP for scheme C.
std::string frameCacheSalt(ArchiveCompression C, const FrameParams &FP);
/// Decodes a frame the writer made (deduplication compares content).
Status decompressFrame(const uint8_t *Frame, size_t FrameSize,
                       const std::vector<uint8_t> &Prefix, uint64_t Original,
                       std::vector<uint8_t> &Out);

/// A source's failure as the options want it worded.
Status sourceError(const ArchiveWriterOptions &O, const std::string &Key,
                   const std::string &Arch, Status S);

/// The thread count of a write: the option, or the threads this process
/// may run on (CPU affinity), not the machine's cores.
unsigned threadsFor(const ArchiveWriterOptions &O);
/// The memory budget of a write on Threads threads (BatchBytes, or its
/// default).
uint64_t budgetFor(const ArchiveWriterOptions &O, unsigned Threads);

/// Runs Work on up to MaxThreads threads of a pool (this one waits); Work
/// takes its items from a shared counter. An exception escaping Work (an
/// allocation failure) stops that worker and becomes the error returned;
/// the items it did not finish must then not be used.
template <typename Fn>
Status runOnWorkers(size_t Items, unsigned MaxThreads, Fn &&Work) {
  std::mutex M;
  Status Failure = Status::ok();
  auto Fail = [&](std::string Message) {
    std::lock_guard<std::mutex> Lock(M);
    if (!Failure)
      Failure = Status::error(std::move(Message));
  };
  // Pool threads join the calling thread's --time-trace session.
  const bool Tracing = llvm::timeTraceProfilerEnabled();
  auto Guarded = [&] {
    TimeTraceWorker Trace(Tracing);
    try {
      Work();
    } catch (const std::bad_alloc &) {
      Fail("out of memory while writing archives");
    } catch (const std::exception &E) {
      Fail(std::string("internal error while writing archives: ") + E.what());
    } catch (...) {
      Fail("internal error while writing archives");
    }
  };
  unsigned Workers = static_cast<unsigned>(std::min<size_t>(MaxThreads, Items));
  if (Workers <= 1) {
    Guarded();
    return Failure;
  }
  llvm::DefaultThreadPool Pool(llvm::hardware_concurrency(Workers));
  for (unsigned T = 0; T < Workers; ++T)
    Pool.async(Guarded);
  llvm::TimeTraceScope Barrier("Barrier", [&] {
    return std::to_string(Items) + " items on " + std::to_string(Workers) +
           " threads";
  });
  Pool.wait();
  return Failure;
}

/// The end of the batch of Sequence that starts at Begin: consecutive
/// entries within the byte budget (at least one). Charge(I) is entry I's.
template <typename ChargeFn>
size_t batchEnd(size_t Begin, size_t Count, uint64_t Budget,
                ChargeFn &&Charge) {
  size_t End = Begin;
  uint64_t Charged = 0;
  while (End < Count && End - Begin < MaxBatchEntries) {
    uint64_t Hint = Charge(End);
    uint64_t C = Hint ? Hint : UnknownSizeCharge;
    if (End > Begin && Charged + C > Budget)
      break;
    Charged += C;
    ++End;
  }
  return End;
}

} // namespace writer

/// One archive being written by writeArchives().
struct ArchiveWriter::Output {
  ArchiveWriter *W = nullptr;
  bool Zstd = false;
  bool Shared = false; ///< "zstd-shared-segments"
  writer::FrameParams Params;  ///< of every zstd frame (Prefix set per frame)
  /// Not empty when frames go through the options' FrameCache: the salt of
  /// their keys (frameCacheSalt).
  std::string CacheSalt;
  std::unique_ptr<AtomicFile> File = std::make_unique<AtomicFile>();
  AtomicFile &F = *File;
  std::vector<Blob> Blobs;
  /// Shared segments: their content and the ones each entry uses (until
  /// the entries are written), where their frames are, and the index.
  SharedSegments Segments;
  std::vector<Blob> SegmentFrames;
  uint64_t SharedStart = 0, SharedEnd = 0;
  uint64_t IndexStart = 0, IndexEnd = 0;
  /// Where the u32 frame count and the frames of the code objects start.
  uint64_t KernelStart = writer::BlobStart;
  /// Content hash -> ordinals of the blobs with that hash (Deduplicate).
  std::unordered_multimap<uint64_t, uint64_t> ByHash;
  /// Deduplicate: how many entries have each size hint (a copy has the
  /// size of its original), and whether some entry gave none.
  std::unordered_map<uint64_t, uint32_t> HintCount;
  bool SomeHintMissing = false;

  /// Whether an entry of hint Hint that read Size bytes may have a copy in
  /// this archive: only those are hashed. An entry whose exact size no
  /// other entry announced has none (a wrong hint only costs a copy that
  /// is stored twice; the output still does not depend on timing).
  bool mayHaveCopy(uint64_t Hint, uint64_t Size) const {
    if (SomeHintMissing || Hint != Size)
      return true;
    auto It = HintCount.find(Hint);
    return It == HintCount.end() || It->second > 1;
  }
  uint64_t Deduplicated = 0;
  /// Blobs placed but not written yet (their threads write them during the
  /// next batch): ordinal -> the frame (zstd) or the bytes, in memory.
  std::unordered_map<uint64_t, const uint8_t *> Unwritten;

  /// The segment index (docs/format-extensions.md), after the code objects,
  /// once their ordinals and segment lists are known (WriterToc.cpp).
  Status writeSegmentIndex();

  /// The original bytes of stored blob Ordinal (WriterFrames.cpp).
  Status storedContent(uint64_t Ordinal, const uint8_t *InMemory,
                       std::vector<uint8_t> &Out);
};

} // namespace kpack

#endif
