//===- WriterFrames.cpp - The code objects' frames ------------------------===//
//
// The pass of ArchiveWriter::writeArchives() that reads every source once,
// compresses it and gives each stored blob its place (deduplication by
// ordinal aliasing), and the zstd frames every phase makes.
//
//===----------------------------------------------------------------------===//

#include "WriterInternals.h"

#include "kpack/ByteOrder.h"
#include "kpack/ContentHash.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/TimeProfiler.h"

#include <atomic>
#include <cstring>

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

/// The original bytes of stored blob Ordinal, read back from the file.
Status ArchiveWriter::Output::storedContent(uint64_t Ordinal,
                                             std::vector<uint8_t> &Out) {
  const Blob &B = Blobs[Ordinal];
  auto Mem = Unwritten.find(Ordinal);
  const uint8_t *InMemory = Mem == Unwritten.end() ? nullptr : Mem->second;
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

Status ArchiveWriter::writeFrames(
    std::vector<Job> &Jobs,
    const std::vector<std::pair<size_t, size_t>> &Sequence,
    std::vector<std::unique_ptr<Output>> &Outs) {
  const ArchiveWriterOptions &First = Jobs.front().Writer->Opts;
  const unsigned MaxThreads = threadsFor(First);
  // The sequential phase compresses likely duplicates that turn out not to
  // be, with its own context.
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx *)> SerialCtx(nullptr,
                                                              ZSTD_freeCCtx);
  std::vector<uint8_t> Theirs, Ours;
  Bytes SerialFrame;
  std::vector<std::unique_ptr<WorkerState>> States(MaxThreads);
  for (auto &St : States)
    St = std::make_unique<WorkerState>();

  struct Item {
    Status Err;
    uint64_t Hash = 0;
    /// A blob with the same hash and size exists already: the bytes are kept
    /// unencoded until the comparison.
    bool Likely = false;
    bool Hashed = false; ///< Hash is set (a copy of it may exist)
    bool Encoded = false;
    unsigned Worker = 0;           ///< whose buffers hold what is kept
    bool RawInRange = false;       ///< raw bytes at RawAt in Bufs.Range
    const uint8_t *Raw = nullptr;  ///< raw bytes, when kept elsewhere
    uint64_t RawAt = 0;
    size_t Size = 0;
    /// In Frames, when Encoded: the u32 size at FrameAt, then the frame.
    uint64_t FrameAt = 0, FrameSize = 0;
    const uint8_t *raw(const std::vector<std::unique_ptr<WorkerState>> &S)
        const {
      return RawInRange ? S[Worker]->Bufs.Range.data() + RawAt : Raw;
    }
  };

  for (size_t Begin = 0; Begin < Sequence.size();) {
    size_t End = batchEnd(Begin, Sequence.size(), First.BatchBytes,
                          [&](size_t K) {
                            const auto &[J, I] = Sequence[K];
                            return Jobs[J].Writer->Entries[I].Source.sizeHint();
                          });

    size_t N = End - Begin;
    std::vector<Item> Items(N);
    std::atomic<size_t> Next{0};
    std::atomic<unsigned> NextWorker{0};
    // The previous batch's blobs are written by the threads that hold them
    // as they start on this batch; the states no thread takes this time,
    // here.
    for (std::unique_ptr<Output> &Out : Outs)
      Out->Unwritten.clear();
    for (size_t T = std::min<size_t>(MaxThreads, N); T < States.size(); ++T)
      if (Status S = States[T]->flushPending())
        return S;
    // The threads take the largest entries first, so that the batch does
    // not end with one thread compressing a large entry while the others
    // wait (bench/therock/schedule.py); results still go out in order.
    std::vector<size_t> Pick(N);
    for (size_t I = 0; I < N; ++I)
      Pick[I] = I;
    std::sort(Pick.begin(), Pick.end(), [&](size_t A, size_t B) {
      auto Hint = [&](size_t I) {
        const auto &[J, EI] = Sequence[Begin + I];
        return Jobs[J].Writer->Entries[EI].Source.sizeHint();
      };
      uint64_t HA = Hint(A), HB = Hint(B);
      return HA != HB ? HA > HB : A < B;
    });
    // Reads (and compresses) in parallel; nothing here depends on timing:
    // the blob index consulted is the one of the previous batches.
    auto Work = [&] {
      const unsigned Me = NextWorker.fetch_add(1);
      WorkerState &St = *States[Me];
      if (Status S = St.flushPending()) {
        St.WriteErr = std::move(S);
        return;
      }
      ReadBuffers &Bufs = St.Bufs;
      for (size_t K; (K = Next.fetch_add(1)) < N;) {
        size_t I = Pick[K];
        Item &It = Items[I];
        Output &O = *Outs[Sequence[Begin + I].first];
        const Entry &E = O.W->Entries[Sequence[Begin + I].second];
        const ArchiveWriterOptions &EO = O.W->Opts;
        const uint8_t *Data = nullptr;
        size_t Size = 0;
        It.Worker = Me;
        // Range holds the bytes this thread kept; a file range read lands
        // after them and is dropped again unless kept.
        const size_t Kept = Bufs.Range.size();
        llvm::scope_exit Drop([&] {
          if (!It.RawInRange)
            Bufs.Range.truncate(Kept);
        });
        const size_t Position = Begin + I;
        {
          llvm::TimeTraceScope Trace("Read", [&] {
            return traceDetail(Position, E.Source.sizeHint(), E.Key, E.Arch);
          });
          if (Status S = E.Source.read(Bufs, Data, Size)) {
            It.Err = sourceError(EO, E.Key, E.Arch, std::move(S));
            continue;
          }
        }
        It.Size = Size;
        It.Hashed = EO.Deduplicate && O.mayHaveCopy(E.Source.sizeHint(), Size);
        if (It.Hashed) {
          llvm::TimeTraceScope Trace(
              "Hash", [&] { return traceDetail(Position, Size); });
          It.Hash = contentHash(Data, Size);
          auto [B, BEnd] = O.ByHash.equal_range(It.Hash);
          for (; B != BEnd && !It.Likely; ++B)
            It.Likely = O.Blobs[B->second].OriginalSize == Size;
        }
        if (!O.Zstd || It.Likely) {
          // Keep the raw bytes: a view stays valid until write() returns;
          // bytes read into Bufs stay in (or are appended to) Range.
          if (Size && Data == Bufs.Produced.data()) {
            Bufs.Range.append(Data, Data + Size);
            Data = Bufs.Range.data() + Bufs.Range.size() - Size;
          }
          if (Size && Data >= Bufs.Range.data() &&
              Data < Bufs.Range.data() + Bufs.Range.size()) {
            It.RawInRange = true;
            It.RawAt = static_cast<uint64_t>(Data - Bufs.Range.data());
          } else {
            It.Raw = Data;
          }
          It.Encoded = !O.Zstd;
          continue;
        }
        if (!St.Ctx)
          St.Ctx = ZSTD_createCCtx();
        FrameParams FP = O.Params;
        if (O.Shared) {
          O.Segments.concatenate(
              O.Segments.itemSegments(Sequence[Begin + I].second),
              St.Prefix);
          FP.Prefix = St.Prefix.data();
          FP.PrefixSize = St.Prefix.size();
        }
        It.FrameAt = St.Frames.size();
        St.Frames.resize_for_overwrite(It.FrameAt + 4); // the size, below
        llvm::TimeTraceScope Trace(
            "Frame", [&] { return traceDetail(Position, Size); });
        if (Status S = compressFrame(St.Ctx, Data, Size, FP, St.Frames)) {
          It.Err = std::move(S);
          continue;
        }
        It.FrameSize = St.Frames.size() - It.FrameAt - 4;
        writeLE<uint32_t>(St.Frames.data() + It.FrameAt,
                          static_cast<uint32_t>(It.FrameSize));
        It.Encoded = true;
      }
    };
    if (Status S = runOnWorkers(N, MaxThreads, Work))
      return S;
    for (auto &St : States)
      if (St->WriteErr)
        return St->WriteErr;

    // Results go out in order, so the bytes never depend on timing.
    for (size_t I = 0; I < N; ++I) {
      Item &It = Items[I];
      llvm::TimeTraceScope Trace(
          "Place", [&] { return traceDetail(Begin + I, It.Size); });
      if (It.Err)
        return It.Err;
      Output &O = *Outs[Sequence[Begin + I].first];
      Entry &E = O.W->Entries[Sequence[Begin + I].second];
      E.OriginalSize = It.Size;
      const uint8_t *Raw = It.raw(States);
      const uint8_t *Frame =
          States[It.Worker]->Frames.data() + It.FrameAt + 4;
      uint64_t FrameSize = It.FrameSize;
      const std::vector<uint32_t> NoSegments;
      const std::vector<uint32_t> &EntrySegments =
          O.Shared ? O.Segments.itemSegments(Sequence[Begin + I].second)
                   : NoSegments;

      if (It.Hashed) {
        bool Found = false;
        auto [B, BEnd] = O.ByHash.equal_range(It.Hash);
        for (; B != BEnd && !Found; ++B) {
          if (O.Blobs[B->second].OriginalSize != It.Size)
            continue;
          const uint8_t *Mine = Raw;
          if (!Mine) { // encoded in this batch: compare the decoded frame
            std::vector<uint8_t> Prefix;
            O.Segments.concatenate(EntrySegments, Prefix);
            if (Status S = decompressFrame(Frame, FrameSize, Prefix, It.Size,
                                           Ours))
              return S;
            Mine = Ours.data();
          }
          if (Status S = O.storedContent(B->second, Theirs))
            return S;
          if (It.Size == 0 || std::memcmp(Theirs.data(), Mine, It.Size) == 0) {
            E.Ordinal = B->second;
            ++O.Deduplicated;
            Found = true;
          }
        }
        if (Found)
          continue;
      }

      if (!It.Encoded) { // a likely duplicate that was not one
        if (!SerialCtx)
          SerialCtx.reset(ZSTD_createCCtx());
        std::vector<uint8_t> Prefix;
        O.Segments.concatenate(EntrySegments, Prefix);
        FrameParams FP = O.Params;
        FP.Prefix = Prefix.data();
        FP.PrefixSize = Prefix.size();
        SerialFrame.clear();
        if (Status S = compressFrame(SerialCtx.get(), Raw, It.Size, FP,
                                     SerialFrame))
          return S;
        Frame = SerialFrame.data();
        FrameSize = SerialFrame.size();
      }
      // The blob gets its place now; the thread holding its bytes writes
      // them there (a frame made here is written at once).
      Blob B;
      B.OriginalSize = It.Size;
      B.Segments = EntrySegments;
      E.Ordinal = O.Blobs.size();
      if (O.Zstd) {
        if (FrameSize > UINT32_MAX)
          return Status::error(E.Key + " (" + E.Arch +
                               "): compressed frame exceeds 4 GiB");
        if (Status S = O.F.reserve(4 + FrameSize, B.Offset))
          return S;
        B.Size = FrameSize;
        if (!It.Encoded) {
          uint8_t SizeField[4];
          writeLE<uint32_t>(SizeField, static_cast<uint32_t>(FrameSize));
          if (Status S = O.F.writeReserved(B.Offset, SizeField, 4))
            return S;
          if (Status S = O.F.writeReserved(B.Offset + 4, Frame, FrameSize))
            return S;
        } else {
          States[It.Worker]->Pending.push_back(
              {&O.F, B.Offset, Frame - 4, 4 + FrameSize, Begin + I});
          O.Unwritten.emplace(E.Ordinal, Frame);
        }
      } else {
        if (Status S = O.F.reserve(It.Size, B.Offset))
          return S;
        B.Size = It.Size;
        if (It.Size) {
          States[It.Worker]->Pending.push_back(
              {&O.F, B.Offset, Raw, It.Size, Begin + I});
          O.Unwritten.emplace(E.Ordinal, Raw);
        }
      }
      if (It.Hashed)
        O.ByHash.emplace(It.Hash, E.Ordinal);
      O.Blobs.push_back(B);
    }
    Begin = End;
  }
  // The last batch's blobs, each thread writing its own.
  {
    std::atomic<unsigned> NextWorker{0};
    if (Status S = runOnWorkers(States.size(), MaxThreads, [&] {
          WorkerState &St = *States[NextWorker.fetch_add(1)];
          St.WriteErr = St.flushPending();
        }))
      return S;
    for (auto &St : States)
      if (St->WriteErr)
        return St->WriteErr;
  }
  return Status::ok();
}
