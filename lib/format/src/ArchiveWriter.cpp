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
#include <memory>
#include <set>
#include <system_error>
#include <thread>
#include <unordered_map>
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
                               EntrySource Source,
                               ArchiveEntryMetadata Metadata) {
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
      Entry{Key, Arch, std::move(Source), std::move(Metadata), 0, 0});
  return Status::ok();
}

namespace {

/// A 64-bit hash that finds candidate duplicates. Every match is confirmed
/// by comparing bytes, so only speed depends on its quality: four lanes over
/// 8-byte words, then the tail bytewise and a final avalanche.
uint64_t contentHash(const uint8_t *Data, size_t Size) {
  constexpr uint64_t K1 = 0x9E3779B185EBCA87ULL, K2 = 0xC2B2AE3D27D4EB4FULL;
  auto Rotl = [](uint64_t V, unsigned R) { return (V << R) | (V >> (64 - R)); };
  uint64_t Lane[4] = {K1, K2, K1 ^ K2, ~K1};
  size_t I = 0;
  for (; I + 32 <= Size; I += 32)
    for (unsigned J = 0; J < 4; ++J) {
      uint64_t W;
      std::memcpy(&W, Data + I + 8 * J, 8);
      Lane[J] = Rotl(Lane[J] + W * K2, 31) * K1;
    }
  uint64_t H = static_cast<uint64_t>(Size) * K1;
  for (unsigned J = 0; J < 4; ++J)
    H = (H ^ Rotl(Lane[J], 27)) * K1 + K2;
  for (; I < Size; ++I)
    H = (H ^ Data[I]) * 0x100000001B3ULL;
  H ^= H >> 33;
  H *= 0xFF51AFD7ED558CCDULL;
  H ^= H >> 33;
  H *= 0xC4CEB9FE1A85EC53ULL;
  H ^= H >> 33;
  return H;
}

Status compressFrame(ZSTD_CCtx *Ctx, const uint8_t *Data, size_t Size,
                     int Level, std::vector<uint8_t> &Scratch,
                     std::vector<uint8_t> &Frame) {
  if (!Ctx)
    return Status::error("zstd: cannot create a context");
  // Compress into scratch (reused, so not zeroed per entry) and keep an
  // exact-size copy until the batch is written.
  size_t Bound = ZSTD_compressBound(Size);
  if (Scratch.size() < Bound)
    Scratch.resize(Bound);
  // ZSTD_compressCCtx records the content size in the frame header, which
  // upstream's reader relies on.
  size_t Got = ZSTD_compressCCtx(Ctx, Scratch.data(), Bound, Data, Size, Level);
  if (ZSTD_isError(Got))
    return Status::error(std::string("zstd: ") + ZSTD_getErrorName(Got));
  Frame.assign(Scratch.data(), Scratch.data() + Got);
  if (Scratch.capacity() > (size_t(16) << 20))
    std::vector<uint8_t>().swap(Scratch);
  return Status::ok();
}

} // namespace

/// One archive being written by writeArchives().
struct ArchiveWriter::Output {
  ArchiveWriter *W = nullptr;
  bool Zstd = false;
  AtomicFile F;
  std::vector<Blob> Blobs;
  /// Content hash -> ordinals of the blobs with that hash (Deduplicate).
  std::unordered_multimap<uint64_t, uint64_t> ByHash;
  uint64_t Deduplicated = 0;

  /// The original bytes of stored blob Ordinal, read back from the file.
  Status storedContent(uint64_t Ordinal, std::vector<uint8_t> &Out) {
    const Blob &B = Blobs[Ordinal];
    if (!Zstd) {
      Out.resize(B.Size);
      return F.readAt(B.Offset, Out.data(), Out.size());
    }
    std::vector<uint8_t> Frame(B.Size);
    if (Status S = F.readAt(B.Offset + 4, Frame.data(), Frame.size()))
      return S;
    Out.resize(B.OriginalSize);
    size_t Got = ZSTD_decompress(Out.data(), Out.size(), Frame.data(),
                                 Frame.size());
    if (ZSTD_isError(Got) || Got != B.OriginalSize)
      return Status::error("internal error: a written zstd frame does not "
                           "decompress");
    return Status::ok();
  }
};

Status ArchiveWriter::write(const std::string &Path, ArchiveWriteStats *Stats) {
  std::vector<Job> Jobs{{this, Path, {}}};
  if (Status S = writeArchives(Jobs))
    return S;
  if (Stats)
    *Stats = Jobs.front().Stats;
  return Status::ok();
}

Status
ArchiveWriter::writeArchives(std::vector<Job> &Jobs,
                             const std::vector<std::pair<size_t, size_t>> &Order) {
  if (Jobs.empty())
    return Status::ok();
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
    bool Zstd = O.Compression == ArchiveCompression::ZstdPerKernel;
    if (Zstd && (O.ZstdLevel < ZSTD_minCLevel() || O.ZstdLevel > ZSTD_maxCLevel()))
      return Status::error("zstd level " + std::to_string(O.ZstdLevel) +
                           " is outside [" + std::to_string(ZSTD_minCLevel()) +
                           ", " + std::to_string(ZSTD_maxCLevel()) + "]");
    if (Zstd && J.Writer->Entries.size() > UINT32_MAX)
      return Status::error("too many entries for a zstd-per-kernel archive");
    auto Out = std::make_unique<Output>();
    Out->W = J.Writer;
    Out->Zstd = Zstd;
    if (Status S = Out->F.open(J.Path))
      return S;
    uint8_t Header[BlobStart] = {};
    std::memcpy(Header, ArchiveMagic, sizeof(ArchiveMagic));
    writeLE<uint32_t>(Header + 4, ArchiveVersion);
    if (Status S = Out->F.write(Header, sizeof(Header)))
      return S;
    if (Zstd) {
      uint8_t Count[4] = {}; // the stored frame count, patched at the end
      if (Status S = Out->F.write(Count, sizeof(Count)))
        return S;
    }
    Outs.push_back(std::move(Out));
  }

  const ArchiveWriterOptions &First = Jobs.front().Writer->Opts;
  unsigned MaxThreads =
      First.Threads ? First.Threads : std::thread::hardware_concurrency();
  MaxThreads = std::max(1u, MaxThreads);
  // The sequential phase compresses likely duplicates that turn out not to
  // be, with its own context.
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx *)> SerialCtx(nullptr,
                                                              ZSTD_freeCCtx);
  std::vector<uint8_t> SerialScratch, Theirs, Ours;

  struct Item {
    Status Err;
    uint64_t Hash = 0;
    /// A blob with the same hash and size exists already: the bytes are kept
    /// unencoded until the comparison.
    bool Likely = false;
    bool Encoded = false;
    std::vector<uint8_t> Owned; ///< raw bytes read by the source
    const uint8_t *Raw = nullptr; ///< raw bytes, when kept
    size_t Size = 0;
    std::vector<uint8_t> Frame; ///< zstd frame, when Encoded
  };

  for (size_t Begin = 0; Begin < Sequence.size();) {
    // A batch: consecutive entries within the byte budget (at least one).
    size_t End = Begin;
    uint64_t Charged = 0;
    while (End < Sequence.size() && End - Begin < MaxBatchEntries) {
      const auto &[J, I] = Sequence[End];
      uint64_t Hint = Jobs[J].Writer->Entries[I].Source.sizeHint();
      uint64_t Charge = Hint ? Hint : UnknownSizeCharge;
      if (End > Begin && Charged + Charge > First.BatchBytes)
        break;
      Charged += Charge;
      ++End;
    }

    size_t N = End - Begin;
    std::vector<Item> Items(N);
    std::atomic<size_t> Next{0};
    // Reads (and compresses) in parallel; nothing here depends on timing:
    // the blob index consulted is the one of the previous batches.
    auto Work = [&] {
      ZSTD_CCtx *Ctx = nullptr;
      std::vector<uint8_t> Buf, Scratch;
      for (size_t I; (I = Next.fetch_add(1)) < N;) {
        Item &It = Items[I];
        Output &O = *Outs[Sequence[Begin + I].first];
        const Entry &E = O.W->Entries[Sequence[Begin + I].second];
        const ArchiveWriterOptions &EO = O.W->Opts;
        const uint8_t *Data = nullptr;
        size_t Size = 0;
        if (Status S = E.Source.read(Buf, Data, Size)) {
          It.Err = EO.NameEntriesInErrors
                       ? Status::error(E.Key + " (" + E.Arch +
                                       "): " + S.message())
                       : std::move(S);
          continue;
        }
        It.Size = Size;
        if (EO.Deduplicate) {
          It.Hash = contentHash(Data, Size);
          auto [B, BEnd] = O.ByHash.equal_range(It.Hash);
          for (; B != BEnd && !It.Likely; ++B)
            It.Likely = O.Blobs[B->second].OriginalSize == Size;
        }
        if (!O.Zstd || It.Likely) {
          // Keep the raw bytes: a view stays valid until write() returns,
          // bytes read into Buf move into the item.
          if (Size && Data == Buf.data()) {
            It.Owned.swap(Buf);
            Data = It.Owned.data();
          }
          It.Raw = Data;
          It.Encoded = !O.Zstd;
          continue;
        }
        if (!Ctx)
          Ctx = ZSTD_createCCtx();
        if (Status S = compressFrame(Ctx, Data, Size, EO.ZstdLevel, Scratch,
                                     It.Frame)) {
          It.Err = std::move(S);
          continue;
        }
        It.Encoded = true;
        Buf.clear();
        if (Buf.capacity() > (size_t(16) << 20))
          Buf.shrink_to_fit();
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

    // Results go out in order, so the bytes never depend on timing.
    for (size_t I = 0; I < N; ++I) {
      Item &It = Items[I];
      if (It.Err)
        return It.Err;
      Output &O = *Outs[Sequence[Begin + I].first];
      Entry &E = O.W->Entries[Sequence[Begin + I].second];
      const ArchiveWriterOptions &EO = O.W->Opts;
      E.OriginalSize = It.Size;

      if (EO.Deduplicate) {
        bool Found = false;
        auto [B, BEnd] = O.ByHash.equal_range(It.Hash);
        for (; B != BEnd && !Found; ++B) {
          if (O.Blobs[B->second].OriginalSize != It.Size)
            continue;
          const uint8_t *Mine = It.Raw;
          if (!Mine) { // encoded in this batch: compare the decoded frame
            Ours.resize(It.Size);
            size_t Got = ZSTD_decompress(Ours.data(), Ours.size(),
                                         It.Frame.data(), It.Frame.size());
            if (ZSTD_isError(Got) || Got != It.Size)
              return Status::error("internal error: a zstd frame does not "
                                   "decompress");
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
        if (Status S = compressFrame(SerialCtx.get(), It.Raw, It.Size,
                                     EO.ZstdLevel, SerialScratch, It.Frame))
          return S;
      }
      Blob B;
      B.Offset = O.F.offset();
      B.OriginalSize = It.Size;
      if (O.Zstd) {
        if (It.Frame.size() > UINT32_MAX)
          return Status::error(E.Key + " (" + E.Arch +
                               "): compressed frame exceeds 4 GiB");
        uint8_t FrameSize[4];
        writeLE<uint32_t>(FrameSize, static_cast<uint32_t>(It.Frame.size()));
        if (Status S = O.F.write(FrameSize, sizeof(FrameSize)))
          return S;
        if (Status S = O.F.write(It.Frame))
          return S;
        B.Size = It.Frame.size();
      } else {
        if (Status S = O.F.write(It.Raw, It.Size))
          return S;
        B.Size = It.Size;
      }
      E.Ordinal = O.Blobs.size();
      if (EO.Deduplicate)
        O.ByHash.emplace(It.Hash, E.Ordinal);
      O.Blobs.push_back(B);
      std::vector<uint8_t>().swap(It.Frame);
      std::vector<uint8_t>().swap(It.Owned);
    }
    Begin = End;
  }

  std::vector<uint64_t> FileBytes(Outs.size());
  for (size_t J = 0; J < Outs.size(); ++J) {
    Output &O = *Outs[J];
    uint64_t TocOffset = O.F.offset();
    if (Status S = O.F.write(
            O.W->buildToc(BlobStart, TocOffset - BlobStart, O.Blobs)))
      return S;
    uint8_t TocField[8];
    writeLE<uint64_t>(TocField, TocOffset);
    if (Status S = O.F.writeAt(8, TocField, sizeof(TocField)))
      return S;
    if (O.Zstd) {
      uint8_t Count[4];
      writeLE<uint32_t>(Count, static_cast<uint32_t>(O.Blobs.size()));
      if (Status S = O.F.writeAt(BlobStart, Count, sizeof(Count)))
        return S;
    }
    FileBytes[J] = O.F.offset();
  }
  for (size_t J = 0; J < Outs.size(); ++J) {
    if (Status S = Outs[J]->F.commit())
      return S;
    ArchiveWriteStats &St = Jobs[J].Stats;
    St = ArchiveWriteStats();
    St.Entries = Outs[J]->W->Entries.size();
    for (const Entry &E : Outs[J]->W->Entries)
      St.OriginalBytes += E.OriginalSize;
    St.FileBytes = FileBytes[J];
    St.Deduplicated = Outs[J]->Deduplicated;
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

std::vector<uint8_t>
ArchiveWriter::buildToc(uint64_t BlobBegin, uint64_t BlobSize,
                        const std::vector<Blob> &Blobs) const {
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
      P.pack_map(3 + (Frames ? 2 : 0) + (E.Metadata.empty() ? 0 : 1));
      packStr(P, "type");
      packStr(P, "hsaco");
      packStr(P, "ordinal");
      P.pack_uint64(E.Ordinal);
      packStr(P, "original_size");
      P.pack_uint64(E.OriginalSize);
      if (!E.Metadata.empty()) {
        packStr(P, "metadata");
        P.pack_map(static_cast<uint32_t>(E.Metadata.size()));
        for (const auto &[Name, Value] : E.Metadata) {
          packStr(P, Name);
          packStr(P, Value);
        }
      }
      if (Frames) {
        packStr(P, "frame_offset");
        P.pack_uint64(Blobs[E.Ordinal].Offset);
        packStr(P, "frame_size");
        P.pack_uint64(Blobs[E.Ordinal].Size);
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
    P.pack_array(static_cast<uint32_t>(Blobs.size()));
    for (const Blob &B : Blobs) {
      P.pack_map(2);
      packStr(P, "offset");
      P.pack_uint64(B.Offset);
      packStr(P, "size");
      P.pack_uint64(B.Size);
    }
  }
  return std::vector<uint8_t>(Buf.data(), Buf.data() + Buf.size());
}
