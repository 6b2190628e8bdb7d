//===- ArchiveWriter.cpp - Writes .kpack archives -------------------------===//
//
// The writer's entry points and the order of its phases (WriterInternals.h).
//
//===----------------------------------------------------------------------===//

#include "WriterInternals.h"

#include "kpack/ByteOrder.h"

#include "llvm/Support/TimeProfiler.h"

#include <cstring>
#include <set>

using namespace kpack;
using namespace kpack::writer;
using kpack::detail::writeLE;

const char *kpack::compressionSchemeName(ArchiveCompression C) {
  switch (C) {
  case ArchiveCompression::None:
    return "none";
  case ArchiveCompression::ZstdPerKernel:
  case ArchiveCompression::ZstdPerKernelLong:
    return "zstd-per-kernel";
  case ArchiveCompression::ZstdSharedSegments:
    return "zstd-shared-segments";
  }
  return "none";
}

uint32_t kpack::archiveFormatVersion(ArchiveCompression C) {
  return C == ArchiveCompression::ZstdSharedSegments ? 2 : 1;
}

int kpack::defaultZstdLevel(ArchiveCompression C) {
  switch (C) {
  case ArchiveCompression::None:
    return 0;
  case ArchiveCompression::ZstdPerKernel:
    return DefaultZstdLevel;
  case ArchiveCompression::ZstdPerKernelLong:
    return ReleaseZstdLevel;
  case ArchiveCompression::ZstdSharedSegments:
    return SharedSegmentsZstdLevel;
  }
  return DefaultZstdLevel;
}

//===----------------------------------------------------------------------===//
// ArchiveWriter
//===----------------------------------------------------------------------===//

ArchiveWriter::ArchiveWriter(ArchiveWriterOptions O) : Opts(std::move(O)) {}

Status ArchiveWriter::addEntry(const std::string &Key, const std::string &Arch,
                               EntrySource Source,
                               EntryMetadata Metadata) {
  if (Key.empty())
    return Status::error("archive entry with an empty key");
  if (Arch.empty())
    return Status::error("archive entry '" + Key + "' has an empty arch");
  auto [It, Inserted] = KeyIndex.emplace(Key, KeyEntries.size());
  if (Inserted)
    KeyEntries.emplace_back();
  for (size_t I : KeyEntries[It->second])
    if (Entries[I].Arch == Arch)
      return Status::error("duplicate archive entry '" + Key + "' for " + Arch);
  KeyEntries[It->second].push_back(Entries.size());
  Entries.push_back(
      Entry{Key, Arch, std::move(Source), std::move(Metadata), 0, 0, 0});
  return Status::ok();
}

void ArchiveWriter::setMetadata(size_t I, const std::string &Name,
                                std::string Value) {
  EntryMetadata &M = Entries[I].Metadata;
  for (auto &[N, V] : M)
    if (N == Name) {
      V = std::move(Value);
      return;
    }
  M.emplace_back(Name, std::move(Value));
}

Status writer::sourceError(const ArchiveWriterOptions &O,
                           const std::string &Key, const std::string &Arch,
                           Status S) {
  return O.NameEntriesInErrors
             ? Status::error(Key + " (" + Arch + "): " + S.message())
             : std::move(S);
}

std::string writer::traceDetail(size_t Position, uint64_t Bytes,
                                const std::string &Key,
                                const std::string &Arch) {
  std::string D = "#" + std::to_string(Position) + " " + std::to_string(Bytes);
  if (!Key.empty())
    D += " " + Key + " (" + Arch + ")";
  return D;
}

unsigned writer::threadsFor(const ArchiveWriterOptions &O) {
  if (O.Threads)
    return O.Threads;
  return std::max(1u, llvm::hardware_concurrency().compute_thread_count());
}

uint64_t writer::budgetFor(const ArchiveWriterOptions &O, unsigned Threads) {
  if (O.BatchBytes)
    return O.BatchBytes;
  return std::max(MinBatchBytes, BatchBytesPerThread * Threads);
}

Status ArchiveWriter::write(const std::string &Path, ArchiveWriteStats *Stats) {
  std::vector<Job> Jobs{{this, Path, {}}};
  if (Status S = writeArchives(Jobs))
    return S;
  if (Stats)
    *Stats = Jobs.front().Stats;
  return Status::ok();
}

Status ArchiveWriter::writeArchives(
    std::vector<Job> &Jobs, const std::vector<std::pair<size_t, size_t>> &Order,
    std::vector<std::unique_ptr<AtomicFile>> *Uncommitted,
    const TocHook &BeforeTocs) {
  if (Jobs.empty())
    return Status::ok();
  llvm::TimeTraceScope Trace("WriteArchives", [&] {
    size_t Entries = 0;
    for (const Job &J : Jobs)
      Entries += J.Writer->Entries.size();
    return std::to_string(Jobs.size()) + " archives, " +
           std::to_string(Entries) + " entries, " +
           std::to_string(threadsFor(Jobs.front().Writer->Opts)) + " threads";
  });
  std::vector<std::pair<size_t, size_t>> Sequence = Order;
  size_t Total = 0;
  for (const Job &J : Jobs)
    Total += J.Writer->Entries.size();
  if (Sequence.empty())
    for (size_t J = 0; J < Jobs.size(); ++J)
      for (size_t I = 0; I < Jobs[J].Writer->Entries.size(); ++I)
        Sequence.emplace_back(J, I);
  if (Sequence.size() != Total)
    return Status::error("internal error: the write order does not name "
                         "every entry once");
  for (const auto &[J, I] : Sequence)
    if (J >= Jobs.size() || I >= Jobs[J].Writer->Entries.size())
      return Status::error("internal error: the write order names no entry");

  std::vector<std::unique_ptr<Output>> Outs;
  for (Job &J : Jobs) {
    const ArchiveWriterOptions &O = J.Writer->Opts;
    bool Zstd = O.Compression != ArchiveCompression::None;
    if (Zstd && (O.ZstdLevel < ZSTD_minCLevel() || O.ZstdLevel > ZSTD_maxCLevel()))
      return Status::error("zstd level " + std::to_string(O.ZstdLevel) +
                           " is outside [" + std::to_string(ZSTD_minCLevel()) +
                           ", " + std::to_string(ZSTD_maxCLevel()) + "]");
    if (Zstd && J.Writer->Entries.size() > UINT32_MAX)
      return Status::error("too many entries for a zstd-per-kernel archive");
    auto Out = std::make_unique<Output>();
    Out->W = J.Writer;
    Out->Zstd = Zstd;
    Out->Shared = O.Compression == ArchiveCompression::ZstdSharedSegments;
    Out->Params.Level = O.ZstdLevel;
    Out->Params.Long = O.Compression == ArchiveCompression::ZstdPerKernelLong;
    Out->Params.WholeWindow = Out->Shared;
    // The cache holds frames that depend on nothing but the code object
    // (not those of shared segments, compressed against other content).
    if (O.Cache && Zstd && !Out->Shared)
      Out->CacheSalt = frameCacheSalt(O.Compression, Out->Params);
    if (Status S = Out->F.open(J.Path))
      return S;
    uint8_t Header[BlobStart] = {};
    std::memcpy(Header, ArchiveMagic, sizeof(ArchiveMagic));
    writeLE<uint32_t>(Header + 4, archiveFormatVersion(O.Compression));
    if (Status S = Out->F.write(Header, sizeof(Header)))
      return S;
    Outs.push_back(std::move(Out));
  }
  // Shared segments precede the frames of the code objects.
  if (Status S = writeSharedSegments(Jobs, Sequence, Outs))
    return S;
  // The pass below reads every source once.
  for (const auto &[J, I] : Sequence) {
    const EntrySource &Src = Jobs[J].Writer->Entries[I].Source;
    Src.willRead();
    Output &O = *Outs[J];
    if (Src.sizeHint() == 0)
      O.SomeHintMissing = true;
    else
      ++O.HintCount[Src.sizeHint()];
  }
  for (std::unique_ptr<Output> &Out : Outs)
    if (Out->Zstd) {
      Out->KernelStart = Out->F.offset();
      uint8_t Count[4] = {}; // the stored frame count, patched at the end
      if (Status S = Out->F.write(Count, sizeof(Count)))
        return S;
    }

  if (Status S = writeFrames(Jobs, Sequence, Outs))
    return S;
  if (BeforeTocs)
    if (Status S = BeforeTocs(Jobs))
      return S;

  std::vector<uint64_t> FileBytes(Outs.size());
  for (size_t J = 0; J < Outs.size(); ++J) {
    llvm::TimeTraceScope TocTrace("TOC", Jobs[J].Path);
    Output &O = *Outs[J];
    O.Segments.releaseContent();
    uint64_t KernelEnd = O.F.offset();
    if (O.Shared)
      if (Status S = O.writeSegmentIndex())
        return S;
    uint64_t TocOffset = O.F.offset();
    if (Status S = O.F.write(O.W->buildToc(O, KernelEnd)))
      return S;
    uint8_t TocField[8];
    writeLE<uint64_t>(TocField, TocOffset);
    if (Status S = O.F.writeAt(8, TocField, sizeof(TocField)))
      return S;
    if (O.Zstd) {
      uint8_t Count[4];
      writeLE<uint32_t>(Count, static_cast<uint32_t>(O.Blobs.size()));
      if (Status S = O.F.writeAt(O.KernelStart, Count, sizeof(Count)))
        return S;
    }
    FileBytes[J] = O.F.offset();
  }
  std::vector<AtomicFile *> Files;
  for (size_t J = 0; J < Outs.size(); ++J) {
    Files.push_back(Outs[J]->File.get());
    ArchiveWriteStats &St = Jobs[J].Stats;
    St = ArchiveWriteStats();
    St.Entries = Outs[J]->W->Entries.size();
    for (const Entry &E : Outs[J]->W->Entries)
      St.OriginalBytes += E.OriginalSize;
    St.FileBytes = FileBytes[J];
    St.Deduplicated = Outs[J]->Deduplicated;
    St.SharedSegments = Outs[J]->SegmentFrames.size();
    for (const Blob &B : Outs[J]->SegmentFrames) {
      St.SharedBytes += B.OriginalSize;
      St.SharedStoredBytes += B.Size;
    }
  }
  if (Uncommitted) {
    for (std::unique_ptr<Output> &O : Outs) {
      if (Status S = O->F.finishContents())
        return S;
      Uncommitted->push_back(std::move(O->File));
    }
    return Status::ok();
  }
  return commitTogether(Files);
}

std::vector<std::string> ArchiveWriter::arches() const {
  std::set<std::string> Unique;
  for (const Entry &E : Entries)
    Unique.insert(E.Arch);
  return std::vector<std::string>(Unique.begin(), Unique.end());
}

std::string kpack::defaultArchFamily(const std::vector<std::string> &Arches) {
  return Arches.size() == 1 ? Arches.front() : std::string("multi");
}
