//===- WriterSharedSegments.cpp - Shared segments of format version 2 -----===//
//
// The first pass of the "zstd-shared-segments" scheme (docs/format-
// extensions.md): every source read and chunked, the segments found
// (kpack/SharedSegments.h) compressed and written before the code objects.
//
//===----------------------------------------------------------------------===//

#include "WriterInternals.h"

#include "kpack/ContentHash.h"
#include "kpack/WriteProgress.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/TimeProfiler.h"

#include <atomic>
#include <mutex>
#include <set>

using namespace kpack;
using namespace kpack::writer;

Status ArchiveWriter::writeSharedSegments(
    std::vector<Job> &Jobs,
    const std::vector<std::pair<size_t, size_t>> &Sequence,
    std::vector<std::unique_ptr<Output>> &Outs) {
  // Positions in Sequence of the entries of shared-segments archives.
  std::vector<size_t> Analysed;
  for (size_t K = 0; K < Sequence.size(); ++K)
    if (Outs[Sequence[K].first]->Shared)
      Analysed.push_back(K);
  std::vector<std::unique_ptr<SharedContentIndex>> Index(Outs.size());
  for (size_t J = 0; J < Outs.size(); ++J)
    if (Outs[J]->Shared)
      Index[J] = std::make_unique<SharedContentIndex>(
          Outs[J]->W->Opts.SharedLimits);
  const ArchiveWriterOptions &First = Jobs.front().Writer->Opts;
  const unsigned MaxThreads = threadsFor(First);

  // Pass 1: every source read, chunked in parallel, indexed in order. With
  // deduplication, a second copy of a code object is left out: it is stored
  // as an alias and would only make its whole content look shared.
  std::vector<std::set<std::pair<uint64_t, uint64_t>>> Seen(Outs.size());
  struct Item {
    Status Err;
    ReadBuffers Owned;
    const uint8_t *Data = nullptr;
    size_t Size = 0;
    uint64_t Hash = 0;
    std::vector<ContentChunk> Chunks;
  };
  for (size_t K : Analysed) {
    const auto &[J, I] = Sequence[K];
    Jobs[J].Writer->Entries[I].Source.willRead();
  }
  WriteProgress Analysis;
  Analysis.Phase = "analysing shared content";
  Analysis.Total = Analysed.size();
  for (size_t Begin = 0; Begin < Analysed.size();) {
    size_t End = batchEnd(Begin, Analysed.size(),
                          budgetFor(First, MaxThreads),
                          [&](size_t K) {
                            const auto &[J, I] = Sequence[Analysed[K]];
                            return Jobs[J].Writer->Entries[I].Source.sizeHint();
                          });
    size_t N = End - Begin;
    std::vector<Item> Items(N);
    std::atomic<size_t> Next{0};
    if (Status S = runOnWorkers(N, MaxThreads, [&] {
      ReadBuffers Bufs;
      for (size_t I; (I = Next.fetch_add(1)) < N;) {
        Item &It = Items[I];
        const auto &[J, EI] = Sequence[Analysed[Begin + I]];
        const ArchiveWriterOptions &EO = Outs[J]->W->Opts;
        const Entry &E = Outs[J]->W->Entries[EI];
        Bufs.Range.clear(); // what it held was not kept
        llvm::TimeTraceScope Trace("Analyse", [&] {
          return traceDetail(Analysed[Begin + I], E.Source.sizeHint(), E.Key,
                             E.Arch);
        });
        if (Status S = E.Source.read(Bufs, It.Data, It.Size)) {
          It.Err = sourceError(EO, E.Key, E.Arch, std::move(S));
          continue;
        }
        if (It.Size && Bufs.holds(It.Data))
          It.Owned.swap(Bufs);
        if (EO.Deduplicate)
          It.Hash = contentHash(It.Data, It.Size);
        It.Chunks = chunkContent(It.Data, It.Size);
      }
    }))
      return S;
    for (size_t I = 0; I < N; ++I) {
      Item &It = Items[I];
      if (It.Err)
        return It.Err;
      const auto &[J, EI] = Sequence[Analysed[Begin + I]];
      if (!Outs[J]->W->Opts.Deduplicate ||
          Seen[J].emplace(It.Hash, It.Size).second)
        Index[J]->add(static_cast<uint32_t>(EI), It.Data, It.Chunks);
      Analysis.Bytes += It.Size;
      It = Item();
    }
    Begin = End;
    Analysis.Done = End;
    Analysis.Finished = End == Analysed.size();
    reportWriteProgress(Analysis);
  }

  // The segments of each archive, compressed in parallel, their frames
  // written back to back (the index follows the code objects).
  for (size_t J = 0; J < Outs.size(); ++J) {
    Output &O = *Outs[J];
    if (!O.Shared)
      continue;
    O.Segments = Index[J]->finish(O.W->Entries.size());
    Index[J].reset();
    const size_t Count = O.Segments.size();
    if (Count > UINT32_MAX)
      return Status::error("too many shared segments");
    for (uint32_t I = 0; I < Count; ++I)
      if (O.Segments.segmentSize(I) > UINT32_MAX)
        return Status::error("a shared segment exceeds 4 GiB");
    std::vector<Bytes> Frames(Count);
    std::vector<Status> Errors(Count);
    std::atomic<size_t> Next{0};
    std::mutex ProgressLock;
    WriteProgress Progress;
    Progress.Phase = "compressing shared segments";
    Progress.Unit = "segments";
    Progress.Total = Count;
    if (Status S = runOnWorkers(Count, MaxThreads, [&] {
      ZSTD_CCtx *Ctx = ZSTD_createCCtx();
      llvm::scope_exit FreeCtx([&] { ZSTD_freeCCtx(Ctx); });
      std::vector<uint8_t> Segment;
      for (size_t I; (I = Next.fetch_add(1)) < Count;) {
        O.Segments.segment(static_cast<uint32_t>(I), Segment);
        llvm::TimeTraceScope Trace(
            "Segment", [&] { return traceDetail(I, Segment.size()); });
        Errors[I] = compressFrame(Ctx, Segment.data(), Segment.size(),
                                  O.Params, Frames[I]);
        std::lock_guard<std::mutex> Lock(ProgressLock);
        Progress.Bytes += Segment.size();
        Progress.Finished = ++Progress.Done == Count;
        reportWriteProgress(Progress);
      }
    }))
      return S;
    O.SharedStart = O.F.offset();
    for (size_t I = 0; I < Count; ++I) {
      if (Errors[I])
        return Errors[I];
      if (Frames[I].size() > UINT32_MAX)
        return Status::error("a shared segment's frame exceeds 4 GiB");
      Blob B;
      B.Offset = O.F.offset();
      B.Size = Frames[I].size();
      B.OriginalSize = O.Segments.segmentSize(static_cast<uint32_t>(I));
      if (Status S = O.F.write(Frames[I].data(), Frames[I].size()))
        return S;
      Frames[I] = Bytes();
      O.SegmentFrames.push_back(std::move(B));
    }
    O.SharedEnd = O.F.offset();
  }
  return Status::ok();
}
