//===- WriterFrames.cpp - The code objects' frames ------------------------===//
//
// The pass of ArchiveWriter::writeArchives() that reads every source once,
// compresses it and gives each stored blob its place (deduplication by
// ordinal aliasing), and the zstd frames every phase makes. The threads
// start entries as kpack/WriteSchedule.h says, with no barrier; entries are
// placed in order by whichever thread finishes the one placement waits for,
// and the placed blobs are written by any thread, so that nothing written
// depends on timing.
//
//===----------------------------------------------------------------------===//

#include "WriterInternals.h"

#include "kpack/ByteOrder.h"
#include "kpack/ContentHash.h"
#include "kpack/FrameCache.h"
#include "kpack/WriteProgress.h"
#include "kpack/WriteSchedule.h"

#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/xxhash.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>

using namespace kpack;
using namespace kpack::writer;
using kpack::detail::writeLE;

int writer::windowLogFor(uint64_t Bytes) {
  int Log = MinWindowLog;
  while (Log < MaxWindowLog && (uint64_t(1) << Log) < Bytes)
    ++Log;
  return Log;
}

Status writer::zstdStatus(size_t Code) {
  return ZSTD_isError(Code)
             ? Status::error(std::string("zstd: ") + ZSTD_getErrorName(Code))
             : Status::ok();
}

Status writer::compressFrame(ZSTD_CCtx *Ctx, const uint8_t *Data,
                             size_t Size, const FrameParams &FP, Bytes &Frame) {
  if (!Ctx)
    return Status::error("zstd: cannot create a context");
  // Appended to Frame, compressed in place (not zero-filled first).
  const size_t Old = Frame.size();
  size_t Bound = ZSTD_compressBound(Size);
  Frame.resize_for_overwrite(Old + Bound);
  uint8_t *Dst = Frame.data() + Old;
  size_t Got;
  if (!FP.Long && !FP.WholeWindow && !FP.PrefixSize) {
    // Upstream's call: the same bytes as its writer for the same level.
    // ZSTD_compressCCtx records the content size in the frame header, which
    // upstream's reader relies on.
    Got = ZSTD_compressCCtx(Ctx, Dst, Bound, Data, Size, FP.Level);
  } else {
    // ZSTD_compress2 records the content size too (ZSTD_c_contentSizeFlag
    // is on by default). The prefix is raw content (ZSTD_dct_rawContent).
    ZSTD_CCtx_reset(Ctx, ZSTD_reset_session_and_parameters);
    int Window = windowLogFor(uint64_t(FP.PrefixSize) + Size);
    if (Status S = zstdStatus(ZSTD_CCtx_setParameter(
            Ctx, ZSTD_c_compressionLevel, FP.Level)))
      return S;
    if (Status S = zstdStatus(
            ZSTD_CCtx_setParameter(Ctx, ZSTD_c_windowLog, Window)))
      return S;
    if (FP.Long)
      if (Status S = zstdStatus(ZSTD_CCtx_setParameter(
              Ctx, ZSTD_c_enableLongDistanceMatching, 1)))
        return S;
    if (FP.PrefixSize)
      if (Status S = zstdStatus(
              ZSTD_CCtx_refPrefix(Ctx, FP.Prefix, FP.PrefixSize)))
        return S;
    Got = ZSTD_compress2(Ctx, Dst, Bound, Data, Size);
  }
  if (Status S = zstdStatus(Got))
    return S;
  Frame.truncate(Old + Got);
  return Status::ok();
}

std::string writer::frameCacheSalt(ArchiveCompression C,
                                   const FrameParams &FP) {
  // Versioned: a change of what compressFrame() does for these parameters
  // must change this string.
  return std::string("kpack-frame-1 scheme=") + compressionSchemeName(C) +
         " format=" + std::to_string(archiveFormatVersion(C)) +
         " level=" + std::to_string(FP.Level) + " long=" +
         (FP.Long ? "1" : "0") + " window=" + (FP.WholeWindow ? "1" : "0") +
         " zstd=" + std::to_string(ZSTD_versionNumber());
}

Status writer::decompressFrame(const uint8_t *Frame, size_t FrameSize,
                               const std::vector<uint8_t> &Prefix,
                               uint64_t Original, std::vector<uint8_t> &Out) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx *)> Ctx(ZSTD_createDCtx(),
                                                         ZSTD_freeDCtx);
  if (!Ctx)
    return Status::error("zstd: cannot create a context");
  Out.resize(Original);
  if (!Prefix.empty())
    if (Status S = zstdStatus(
            ZSTD_DCtx_refPrefix(Ctx.get(), Prefix.data(), Prefix.size())))
      return S;
  size_t Got =
      ZSTD_decompressDCtx(Ctx.get(), Out.data(), Out.size(), Frame, FrameSize);
  if (ZSTD_isError(Got) || Got != Original)
    return Status::error("internal error: a written zstd frame does not "
                         "decompress");
  return Status::ok();
}

/// The original bytes of stored blob Ordinal: InMemory, its frame (zstd)
/// or bytes ("none") if it is not written yet, or else read back from the
/// file.
Status ArchiveWriter::Output::storedContent(uint64_t Ordinal,
                                             const uint8_t *InMemory,
                                             std::vector<uint8_t> &Out) {
  const Blob &B = Blobs[Ordinal];
  if (!Zstd) {
    Out.resize(B.Size);
    if (InMemory) {
      if (B.Size)
        std::memcpy(Out.data(), InMemory, B.Size);
      return Status::ok();
    }
    return F.readAt(B.Offset, Out.data(), Out.size());
  }
  std::vector<uint8_t> Frame, Prefix;
  if (!InMemory) {
    Frame.resize(B.Size);
    if (Status S = F.readAt(B.Offset + 4, Frame.data(), Frame.size()))
      return S;
    InMemory = Frame.data();
  }
  Segments.concatenate(B.Segments, Prefix);
  return decompressFrame(InMemory, B.Size, Prefix, B.OriginalSize, Out);
}

namespace {

/// One entry of the pass, from its read to its write.
struct Item {
  Status Err = Status::ok();
  uint64_t Hash = 0;
  uint64_t Digest = 0; ///< EntryDigests: xxh3_64bits of the bytes
  bool Hashed = false; ///< Hash is set (a copy of it may exist)
  /// A blob with the same hash and size existed when it was read: its raw
  /// bytes are kept, unencoded, until it is placed.
  bool Likely = false;
  /// Its blob is ready: Frame (zstd), or the raw bytes ("none").
  bool Encoded = false;
  size_t Size = 0;
  const uint8_t *Raw = nullptr; ///< raw bytes kept: a view, or in Kept
  ReadBuffers Kept;             ///< raw bytes read by the writer and kept
  Bytes Frame;                  ///< the frame's u32 size, then the frame
};

/// What one thread keeps from one entry to the next: its zstd context and
/// read buffers.
struct ThreadState {
  ZSTD_CCtx *Ctx = nullptr;
  ReadBuffers Bufs;
  std::vector<uint8_t> Prefix;
  ThreadState() = default;
  ThreadState(const ThreadState &) = delete;
  ThreadState &operator=(const ThreadState &) = delete;
  ~ThreadState() { ZSTD_freeCCtx(Ctx); }
};

} // namespace

Status ArchiveWriter::writeFrames(
    std::vector<Job> &Jobs,
    const std::vector<std::pair<size_t, size_t>> &Sequence,
    std::vector<std::unique_ptr<Output>> &Outs) {
  const size_t Count = Sequence.size();
  if (!Count)
    return Status::ok();
  const ArchiveWriterOptions &First = Jobs.front().Writer->Opts;
  const unsigned MaxThreads = threadsFor(First);
  auto EntryOf = [&](size_t K) -> Entry & {
    return Outs[Sequence[K].first]->W->Entries[Sequence[K].second];
  };

  // When each entry starts (kpack/WriteSchedule.h): its cost is its size
  // hint; its charge, the bytes its read puts in the writer's buffers.
  std::vector<WriteSchedule::Entry> Plan(Count);
  // Progress (kpack/WriteProgress.h): the bytes are known in advance when
  // every source gives its size.
  WriteProgress Progress;
  Progress.Phase = "writing archives";
  Progress.Total = Count;
  for (size_t K = 0; K < Count; ++K) {
    const EntrySource &Src = EntryOf(K).Source;
    uint64_t Cost = Src.sizeHint() ? Src.sizeHint() : UnknownSizeCharge;
    Plan[K] = {Cost, Src.readsIntoBuffers() ? Cost : 0};
    Progress.TotalBytes = Src.sizeHint() && (K == 0 || Progress.TotalBytes)
                              ? Progress.TotalBytes + Src.sizeHint()
                              : 0;
  }
  reportWriteProgress(Progress);
  WriteSchedule Schedule(std::move(Plan), MaxThreads,
                         budgetFor(First, MaxThreads));

  std::vector<Item> Items(Count);
  /// A placed blob's bytes, to be written by any thread.
  struct PendingWrite {
    Output *O; ///< whose file and Unwritten blobs
    uint64_t Ordinal;
    uint64_t At;
    const uint8_t *Data;
    size_t Size;
    size_t Position; ///< in the pass
  };
  // M guards the schedule, the write queue, the Unwritten blobs and the
  // progress of the pass; IndexLock the blob index (Blobs, ByHash), which
  // the placing thread extends while others look up likely duplicates.
  std::mutex M, IndexLock;
  std::condition_variable Changed;
  std::deque<PendingWrite> Writes;
  std::vector<uint8_t> Finished(Count);
  size_t Placed = 0;
  bool Placing = false, Failed = false;
  Status Failure = Status::ok();
  auto Fail = [&](Status S) { // M held
    if (!Failed)
      Failure = std::move(S);
    Failed = true;
    Changed.notify_all();
  };

  // Reads, hashes and compresses entry K on this thread (M not held);
  // returns the bytes it holds until written.
  auto Prepare = [&](size_t K, ThreadState &T) -> uint64_t {
    Item &It = Items[K];
    Output &O = *Outs[Sequence[K].first];
    const Entry &E = EntryOf(K);
    const ArchiveWriterOptions &EO = O.W->Opts;
    const uint8_t *Data = nullptr;
    size_t Size = 0;
    T.Bufs.Range.clear();
    {
      llvm::TimeTraceScope Trace("Read", [&] {
        return traceDetail(K, E.Source.sizeHint(), E.Key, E.Arch);
      });
      if (Status S = E.Source.read(T.Bufs, Data, Size)) {
        It.Err = sourceError(EO, E.Key, E.Arch, std::move(S));
        return 0;
      }
    }
    It.Size = Size;
    if (EO.EntryDigests)
      It.Digest = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(Data, Size));
    It.Hashed = EO.Deduplicate && O.mayHaveCopy(E.Source.sizeHint(), Size);
    if (It.Hashed) {
      llvm::TimeTraceScope Trace("Hash",
                                 [&] { return traceDetail(K, Size); });
      It.Hash = contentHash(Data, Size);
      std::lock_guard<std::mutex> Lock(IndexLock);
      auto [B, BEnd] = O.ByHash.equal_range(It.Hash);
      for (; B != BEnd && !It.Likely; ++B)
        It.Likely = O.Blobs[B->second].OriginalSize == Size;
    }
    if (!O.Zstd || It.Likely) {
      // Keep the raw bytes: a view stays valid until write() returns;
      // bytes read into this thread's buffers move to the item.
      uint64_t Held = 0;
      if (Size && T.Bufs.holds(Data)) {
        It.Kept.swap(T.Bufs);
        Held = Size;
      }
      It.Raw = Data;
      It.Encoded = !O.Zstd;
      return Held;
    }
    if (!T.Ctx)
      T.Ctx = ZSTD_createCCtx();
    FrameParams FP = O.Params;
    if (O.Shared) {
      O.Segments.concatenate(O.Segments.itemSegments(Sequence[K].second),
                             T.Prefix);
      FP.Prefix = T.Prefix.data();
      FP.PrefixSize = T.Prefix.size();
    }
    It.Frame.resize_for_overwrite(4); // the size, below
    FrameCache *Cache = O.CacheSalt.empty() ? nullptr : EO.Cache.get();
    FrameCache::Key CacheKey{};
    bool Cached = false;
    if (Cache) {
      llvm::TimeTraceScope Trace("CacheLookup",
                                 [&] { return traceDetail(K, Size); });
      CacheKey = FrameCache::keyOf(Data, Size, O.CacheSalt);
      Cached = Cache->lookup(CacheKey, It.Frame);
    }
    if (Cached) {
      llvm::TimeTraceScope Trace("CacheHit",
                                 [&] { return traceDetail(K, Size); });
    } else {
      {
        llvm::TimeTraceScope Trace("Frame",
                                   [&] { return traceDetail(K, Size); });
        if (Status S = compressFrame(T.Ctx, Data, Size, FP, It.Frame)) {
          It.Err = std::move(S);
          return 0;
        }
      }
      if (Cache) {
        llvm::TimeTraceScope Trace("CacheStore",
                                   [&] { return traceDetail(K, Size); });
        Cache->store(CacheKey, It.Frame.data() + 4, It.Frame.size() - 4);
      }
    }
    writeLE<uint32_t>(It.Frame.data(),
                      static_cast<uint32_t>(It.Frame.size() - 4));
    It.Encoded = true;
    return It.Frame.size();
  };

  // Places entry K, in order (one thread at a time, M not held): decides
  // deduplication against every blob placed before it, gives a new blob
  // its place; its bytes are then written by any thread (Write set).
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx *)> SerialCtx(nullptr,
                                                              ZSTD_freeCCtx);
  std::vector<uint8_t> Theirs, Ours, InMemory;
  auto Place = [&](size_t K, std::optional<PendingWrite> &Write) -> Status {
    Item &It = Items[K];
    llvm::TimeTraceScope Trace("Place",
                               [&] { return traceDetail(K, It.Size); });
    if (It.Err)
      return It.Err;
    Output &O = *Outs[Sequence[K].first];
    Entry &E = EntryOf(K);
    E.OriginalSize = It.Size;
    E.Digest = It.Digest;
    const std::vector<uint32_t> NoSegments;
    const std::vector<uint32_t> &EntrySegments =
        O.Shared ? O.Segments.itemSegments(Sequence[K].second) : NoSegments;

    if (It.Hashed) {
      // Only this thread adds to the index: it reads it without IndexLock.
      auto [B, BEnd] = O.ByHash.equal_range(It.Hash);
      for (; B != BEnd; ++B) {
        if (O.Blobs[B->second].OriginalSize != It.Size)
          continue;
        const uint8_t *Mine = It.Raw;
        if (!Mine) { // encoded already: compare the decoded frame
          std::vector<uint8_t> Prefix;
          O.Segments.concatenate(EntrySegments, Prefix);
          if (Status S = decompressFrame(It.Frame.data() + 4,
                                         It.Frame.size() - 4, Prefix,
                                         It.Size, Ours))
            return S;
          Mine = Ours.data();
        }
        // A blob not written yet is read from memory, copied while no
        // thread can finish writing (and free) it.
        bool Unwritten = false;
        {
          std::lock_guard<std::mutex> Lock(M);
          auto Mem = O.Unwritten.find(B->second);
          if (Mem != O.Unwritten.end()) {
            const Blob &Stored = O.Blobs[B->second];
            InMemory.assign(Mem->second, Mem->second + Stored.Size);
            Unwritten = true;
          }
        }
        if (Status S = O.storedContent(
                B->second, Unwritten ? InMemory.data() : nullptr, Theirs))
          return S;
        if (It.Size == 0 || std::memcmp(Theirs.data(), Mine, It.Size) == 0) {
          E.Ordinal = B->second;
          ++O.Deduplicated;
          return Status::ok();
        }
      }
    }

    if (!It.Encoded) { // a likely duplicate that was not one
      if (!SerialCtx)
        SerialCtx.reset(ZSTD_createCCtx());
      std::vector<uint8_t> Prefix;
      O.Segments.concatenate(EntrySegments, Prefix);
      FrameParams FP = O.Params;
      FP.Prefix = Prefix.data();
      FP.PrefixSize = Prefix.size();
      It.Frame.resize_for_overwrite(4);
      llvm::TimeTraceScope Trace("Frame",
                                 [&] { return traceDetail(K, It.Size); });
      if (Status S =
              compressFrame(SerialCtx.get(), It.Raw, It.Size, FP, It.Frame))
        return S;
      writeLE<uint32_t>(It.Frame.data(),
                        static_cast<uint32_t>(It.Frame.size() - 4));
    }
    Blob B;
    B.OriginalSize = It.Size;
    B.Segments = EntrySegments;
    E.Ordinal = O.Blobs.size();
    if (O.Zstd) {
      uint64_t FrameSize = It.Frame.size() - 4;
      if (FrameSize > UINT32_MAX)
        return Status::error(E.Key + " (" + E.Arch +
                             "): compressed frame exceeds 4 GiB");
      if (Status S = O.F.reserve(4 + FrameSize, B.Offset))
        return S;
      B.Size = FrameSize;
      Write = PendingWrite{&O, E.Ordinal, B.Offset, It.Frame.data(),
                           It.Frame.size(), K};
    } else {
      if (Status S = O.F.reserve(It.Size, B.Offset))
        return S;
      B.Size = It.Size;
      if (It.Size)
        Write = PendingWrite{&O, E.Ordinal, B.Offset, It.Raw, It.Size, K};
    }
    std::lock_guard<std::mutex> Lock(IndexLock);
    if (It.Hashed)
      O.ByHash.emplace(It.Hash, E.Ordinal);
    O.Blobs.push_back(std::move(B));
    return Status::ok();
  };

  // Frees what entry K held (M not held). Moved out: a SmallVector assigned
  // an empty one keeps its buffer.
  auto Release = [&](size_t K) {
    Bytes Frame = std::move(Items[K].Frame);
    Bytes Range = std::move(Items[K].Kept.Range);
    std::vector<uint8_t> Produced = std::move(Items[K].Kept.Produced);
  };

  // Every thread: writes placed blobs first, else starts the entry the
  // schedule gives, else waits. The thread that finishes an entry places
  // every finished entry that follows the placed ones.
  auto Work = [&] {
    ThreadState T;
    std::unique_lock<std::mutex> Lock(M);
    auto PlaceReady = [&] {
      Placing = true;
      while (!Failed && Placed < Count && Finished[Placed]) {
        size_t K = Placed;
        std::optional<PendingWrite> Write;
        Lock.unlock();
        Status S = Place(K, Write);
        bool Free = !S && !Write;
        if (Free)
          Release(K);
        Lock.lock();
        if (S) {
          Fail(std::move(S));
          break;
        }
        if (Write) {
          Write->O->Unwritten.emplace(Write->Ordinal,
                                      Write->Data + (Write->O->Zstd ? 4 : 0));
          Writes.push_back(*Write);
        } else {
          Schedule.released(K);
        }
        ++Placed;
        Progress.Done = Placed;
        Progress.Bytes += Items[K].Size;
        Progress.Finished = Placed == Count;
        reportWriteProgress(Progress);
        Changed.notify_all();
      }
      Placing = false;
    };
    try {
      while (!Failed) {
        if (!Writes.empty()) {
          PendingWrite W = Writes.front();
          Writes.pop_front();
          Lock.unlock();
          Status S = Status::ok();
          {
            llvm::TimeTraceScope Trace(
                "Write", [&] { return traceDetail(W.Position, W.Size); });
            S = W.O->F.writeReserved(W.At, W.Data, W.Size);
          }
          Lock.lock();
          if (S) {
            Fail(std::move(S));
            break;
          }
          W.O->Unwritten.erase(W.Ordinal);
          Lock.unlock();
          Release(W.Position);
          Lock.lock();
          Schedule.released(W.Position);
          Changed.notify_all();
          continue;
        }
        size_t K = Schedule.next();
        if (K != WriteSchedule::None) {
          Lock.unlock();
          uint64_t Held = Prepare(K, T);
          Lock.lock();
          Finished[K] = 1;
          Schedule.finished(K, Held);
          Changed.notify_all(); // memory changed; the exemption may apply
          if (!Placing)
            PlaceReady();
          continue;
        }
        if (Placed == Count)
          break; // every blob placed, the writes queued taken
        llvm::TimeTraceScope Trace("Barrier", [&] {
          return std::string(Schedule.allStarted() ? "end of the pass"
                                                   : "memory budget");
        });
        Changed.wait(Lock);
      }
    } catch (...) {
      if (!Lock.owns_lock())
        Lock.lock();
      Failed = true;
      Changed.notify_all();
      throw;
    }
  };
  if (Status S = runOnWorkers(Count, MaxThreads, Work))
    return S;
  return Failure;
}
