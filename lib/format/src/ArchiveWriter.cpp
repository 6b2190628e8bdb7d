//===- ArchiveWriter.cpp - Writes .kpack v1 archives ----------------------===//

#include "kpack/ArchiveWriter.h"

#include "kpack/ByteOrder.h"
#include "kpack/AtomicFile.h"

#include <msgpack.hpp>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <system_error>
#include <thread>
#include <unistd.h>

using namespace kpack;
using kpack::detail::writeLE;

namespace {

constexpr char ArchiveMagic[4] = {'K', 'P', 'A', 'K'};
constexpr uint32_t ArchiveVersion = 1;
constexpr uint64_t BlobStart = 64;
/// Batching charge for a callback source that gave no size hint.
constexpr uint64_t UnknownSizeCharge = uint64_t(1) << 20;
constexpr size_t MaxBatchEntries = 1024;

Status readFileRange(const std::string &Path, uint64_t Offset, uint64_t Size,
                     std::vector<uint8_t> &Out) {
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return Status::error("cannot open '" + Path + "': " + std::strerror(errno));
  Status Result = Status::ok();
  try {
    Out.resize(Size);
  } catch (const std::bad_alloc &) {
    ::close(Fd);
    return Status::error("out of memory reading " + std::to_string(Size) +
                         " bytes of '" + Path + "'");
  }
  uint64_t Done = 0;
  while (Done < Size) {
    ssize_t N = ::pread(Fd, Out.data() + Done, Size - Done,
                        static_cast<off_t>(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      Result = Status::error("cannot read '" + Path + "': " +
                             std::strerror(errno));
      break;
    }
    if (N == 0) {
      Result = Status::error("'" + Path + "' ends before byte " +
                             std::to_string(Offset + Size));
      break;
    }
    Done += static_cast<uint64_t>(N);
  }
  ::close(Fd);
  return Result;
}

template <typename Packer> void packStr(Packer &P, const std::string &S) {
  P.pack_str(static_cast<uint32_t>(S.size()));
  P.pack_str_body(S.data(), static_cast<uint32_t>(S.size()));
}

} // namespace

const char *kpack::compressionSchemeName(ArchiveCompression C) {
  return C == ArchiveCompression::None ? "none" : "zstd-per-kernel";
}

//===----------------------------------------------------------------------===//
// EntrySource
//===----------------------------------------------------------------------===//

EntrySource EntrySource::fromBytes(const uint8_t *Data, size_t Size) {
  EntrySource S;
  S.K = Kind::View;
  S.Data = Data;
  S.Size = Size;
  return S;
}

EntrySource EntrySource::fromOwnedBytes(std::vector<uint8_t> Bytes) {
  EntrySource S;
  S.K = Kind::Owned;
  S.Size = Bytes.size();
  S.Owned = std::make_shared<const std::vector<uint8_t>>(std::move(Bytes));
  return S;
}

EntrySource EntrySource::fromFileRange(std::string Path, uint64_t Offset,
                                       uint64_t Size) {
  EntrySource S;
  S.K = Kind::FileRange;
  S.Path = std::move(Path);
  S.Offset = Offset;
  S.Size = Size;
  return S;
}

EntrySource EntrySource::fromCallback(Producer P, uint64_t SizeHint) {
  EntrySource S;
  S.K = Kind::Callback;
  S.Make = std::move(P);
  S.Size = SizeHint;
  return S;
}

Status EntrySource::read(std::vector<uint8_t> &Out, const uint8_t *&View,
                         size_t &ViewSize) const {
  switch (K) {
  case Kind::View:
    View = Data;
    ViewSize = Size;
    return Status::ok();
  case Kind::Owned:
    View = Owned->data();
    ViewSize = Owned->size();
    return Status::ok();
  case Kind::FileRange:
    if (Status S = readFileRange(Path, Offset, Size, Out))
      return S;
    break;
  case Kind::Callback:
    Out.clear();
    if (!Make)
      return Status::error("entry source has no producer");
    if (Status S = Make(Out))
      return S;
    break;
  }
  View = Out.data();
  ViewSize = Out.size();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// ArchiveWriter
//===----------------------------------------------------------------------===//

ArchiveWriter::ArchiveWriter(ArchiveWriterOptions O) : Opts(std::move(O)) {}

Status ArchiveWriter::addEntry(const std::string &Key, const std::string &Arch,
                               EntrySource Source) {
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
  Entries.push_back(Entry{Key, Arch, std::move(Source), 0, 0, 0});
  return Status::ok();
}

Status ArchiveWriter::writeRaw(AtomicFile &F) {
  std::vector<uint8_t> Buf;
  for (Entry &E : Entries) {
    const uint8_t *Data = nullptr;
    size_t Size = 0;
    if (Status S = E.Source.read(Buf, Data, Size))
      return Status::error(E.Key + " (" + E.Arch + "): " + S.message());
    E.OriginalSize = E.BlobSize = Size;
    E.BlobOffset = F.offset();
    if (Status S = F.write(Data, Size))
      return S;
  }
  return Status::ok();
}

Status ArchiveWriter::writeZstd(AtomicFile &F) {
  if (Entries.size() > UINT32_MAX)
    return Status::error("too many entries for a zstd-per-kernel archive");
  uint8_t Count[4];
  writeLE<uint32_t>(Count, static_cast<uint32_t>(Entries.size()));
  if (Status S = F.write(Count, sizeof(Count)))
    return S;

  unsigned MaxThreads = Opts.Threads ? Opts.Threads
                                     : std::thread::hardware_concurrency();
  MaxThreads = std::max(1u, MaxThreads);

  for (size_t Begin = 0; Begin < Entries.size();) {
    // A batch: consecutive entries within the byte budget (at least one).
    size_t End = Begin;
    uint64_t Charged = 0;
    while (End < Entries.size() && End - Begin < MaxBatchEntries) {
      uint64_t Hint = Entries[End].Source.sizeHint();
      uint64_t Charge = Hint ? Hint : UnknownSizeCharge;
      if (End > Begin && Charged + Charge > Opts.BatchBytes)
        break;
      Charged += Charge;
      ++End;
    }

    size_t N = End - Begin;
    std::vector<std::vector<uint8_t>> Frames(N);
    std::vector<Status> Errors(N);
    std::atomic<size_t> Next{0};
    auto Work = [&] {
      ZSTD_CCtx *Ctx = ZSTD_createCCtx();
      std::vector<uint8_t> Buf, Scratch;
      for (size_t I; (I = Next.fetch_add(1)) < N;) {
        Entry &E = Entries[Begin + I];
        const uint8_t *Data = nullptr;
        size_t Size = 0;
        if (!Ctx) {
          Errors[I] = Status::error("zstd: cannot create a context");
          continue;
        }
        if (Status S = E.Source.read(Buf, Data, Size)) {
          Errors[I] = Status::error(E.Key + " (" + E.Arch + "): " +
                                    S.message());
          continue;
        }
        E.OriginalSize = Size;
        // Compress into per-thread scratch (reused, so not zeroed per entry)
        // and keep an exact-size copy until the batch is written.
        size_t Bound = ZSTD_compressBound(Size);
        if (Scratch.size() < Bound)
          Scratch.resize(Bound);
        // ZSTD_compressCCtx records the content size in the frame header,
        // which upstream's reader relies on.
        size_t Got = ZSTD_compressCCtx(Ctx, Scratch.data(), Bound, Data, Size,
                                       Opts.ZstdLevel);
        if (ZSTD_isError(Got)) {
          Errors[I] = Status::error(std::string("zstd: ") +
                                    ZSTD_getErrorName(Got));
          continue;
        }
        Frames[I].assign(Scratch.data(), Scratch.data() + Got);
        Buf.clear();
        if (Buf.capacity() > (size_t(16) << 20))
          Buf.shrink_to_fit();
        if (Scratch.capacity() > (size_t(16) << 20))
          std::vector<uint8_t>().swap(Scratch);
      }
      ZSTD_freeCCtx(Ctx);
    };
    unsigned Workers = static_cast<unsigned>(std::min<size_t>(MaxThreads, N));
    std::vector<std::thread> Pool;
    for (unsigned T = 1; T < Workers; ++T) {
      try {
        Pool.emplace_back(Work);
      } catch (const std::system_error &) {
        break; // no more threads available: the others do the work
      }
    }
    Work();
    for (std::thread &T : Pool)
      T.join();

    // Results go out in ordinal order, so the bytes never depend on timing.
    for (size_t I = 0; I < N; ++I) {
      if (Errors[I])
        return Errors[I];
      Entry &E = Entries[Begin + I];
      if (Frames[I].size() > UINT32_MAX)
        return Status::error(E.Key + " (" + E.Arch +
                             "): compressed frame exceeds 4 GiB");
      uint8_t FrameSize[4];
      writeLE<uint32_t>(FrameSize, static_cast<uint32_t>(Frames[I].size()));
      E.BlobOffset = F.offset();
      E.BlobSize = Frames[I].size();
      if (Status S = F.write(FrameSize, sizeof(FrameSize)))
        return S;
      if (Status S = F.write(Frames[I]))
        return S;
      std::vector<uint8_t>().swap(Frames[I]);
    }
    Begin = End;
  }
  return Status::ok();
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

std::vector<uint8_t> ArchiveWriter::buildToc(uint64_t BlobBegin,
                                             uint64_t BlobSize) const {
  bool Zstd = Opts.Compression == ArchiveCompression::ZstdPerKernel;
  std::vector<std::string> Arches = arches();

  // Key order matches upstream's writer, so upstream-shaped tooling that
  // compares TOCs sees the same layout.
  msgpack::sbuffer Buf;
  msgpack::packer<msgpack::sbuffer> P(Buf);
  P.pack_map(Zstd ? 8 : 7);
  packStr(P, "format_version");
  P.pack_uint32(1);
  packStr(P, "group_name");
  packStr(P, Opts.GroupName);
  packStr(P, "gfx_arch_family");
  packStr(P, Opts.GfxArchFamily.empty() ? defaultArchFamily(Arches)
                                        : Opts.GfxArchFamily);
  packStr(P, "gfx_arches");
  P.pack_array(static_cast<uint32_t>(Arches.size()));
  for (const std::string &A : Arches)
    packStr(P, A);

  packStr(P, "toc");
  // KeyIndex is sorted by key; the TOC lists keys in first-use order.
  std::vector<const std::string *> KeyNames(KeyEntries.size());
  for (const auto &[Key, Index] : KeyIndex)
    KeyNames[Index] = &Key;
  P.pack_map(static_cast<uint32_t>(KeyEntries.size()));
  for (size_t K = 0; K < KeyEntries.size(); ++K) {
    packStr(P, *KeyNames[K]);
    P.pack_map(static_cast<uint32_t>(KeyEntries[K].size()));
    for (size_t I : KeyEntries[K]) {
      const Entry &E = Entries[I];
      packStr(P, E.Arch);
      bool Frames = Zstd && Opts.FrameOffsets;
      P.pack_map(Frames ? 5 : 3);
      packStr(P, "type");
      packStr(P, "hsaco");
      packStr(P, "ordinal");
      P.pack_uint64(I);
      packStr(P, "original_size");
      P.pack_uint64(E.OriginalSize);
      if (Frames) {
        packStr(P, "frame_offset");
        P.pack_uint64(E.BlobOffset);
        packStr(P, "frame_size");
        P.pack_uint64(E.BlobSize);
      }
    }
  }

  packStr(P, "compression_scheme");
  packStr(P, compressionSchemeName(Opts.Compression));
  if (Zstd) {
    packStr(P, "zstd_offset");
    P.pack_uint64(BlobBegin);
    packStr(P, "zstd_size");
    P.pack_uint64(BlobSize);
  } else {
    packStr(P, "blobs");
    P.pack_array(static_cast<uint32_t>(Entries.size()));
    for (const Entry &E : Entries) {
      P.pack_map(2);
      packStr(P, "offset");
      P.pack_uint64(E.BlobOffset);
      packStr(P, "size");
      P.pack_uint64(E.BlobSize);
    }
  }
  return std::vector<uint8_t>(Buf.data(), Buf.data() + Buf.size());
}

Status ArchiveWriter::write(const std::string &Path, ArchiveWriteStats *Stats) {
  bool Zstd = Opts.Compression == ArchiveCompression::ZstdPerKernel;
  if (Zstd && (Opts.ZstdLevel < ZSTD_minCLevel() ||
               Opts.ZstdLevel > ZSTD_maxCLevel()))
    return Status::error("zstd level " + std::to_string(Opts.ZstdLevel) +
                         " is outside [" + std::to_string(ZSTD_minCLevel()) +
                         ", " + std::to_string(ZSTD_maxCLevel()) + "]");
  AtomicFile F;
  if (Status S = F.open(Path))
    return S;
  uint8_t Header[BlobStart] = {};
  std::memcpy(Header, ArchiveMagic, sizeof(ArchiveMagic));
  writeLE<uint32_t>(Header + 4, ArchiveVersion);
  if (Status S = F.write(Header, sizeof(Header)))
    return S;
  if (Status S = Zstd ? writeZstd(F) : writeRaw(F))
    return S;
  uint64_t TocOffset = F.offset();
  if (Status S = F.write(buildToc(BlobStart, TocOffset - BlobStart)))
    return S;
  uint8_t TocField[8];
  writeLE<uint64_t>(TocField, TocOffset);
  if (Status S = F.writeAt(8, TocField, sizeof(TocField)))
    return S;
  uint64_t FileBytes = F.offset();
  if (Status S = F.commit())
    return S;
  if (Stats) {
    Stats->Entries = Entries.size();
    Stats->OriginalBytes = 0;
    for (const Entry &E : Entries)
      Stats->OriginalBytes += E.OriginalSize;
    Stats->FileBytes = FileBytes;
  }
  return Status::ok();
}
