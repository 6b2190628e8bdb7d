//===- BundleCodec.cpp - Clang offload bundles (FORMAT.md §2) -------------===//

#include "kpack/BundleCodec.h"

#include "kpack/ByteOrder.h"
#include "kpack/Quote.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <new>

using namespace kpack;
using kpack::detail::alignTo;
using kpack::detail::readLE;

namespace {

constexpr const char *BundleMagic = OffloadBundleMagic;
constexpr size_t BundleMagicSize = OffloadBundleMagicSize;
constexpr char CcobMagic[] = "CCOB";
constexpr size_t CcobMagicSize = 4;
constexpr size_t EntryFixedSize = OffloadBundleEntryFixedSize;
/// clang's header fields cap an uncompressed bundle far below this; the limit
/// only keeps a hostile v3 header from asking for an absurd allocation.
constexpr uint64_t MaxUncompressedSize = uint64_t(1) << 36;
/// Upper bounds of the expansion ratio of each codec (deflate: 1032:1; zstd
/// with RLE blocks: a few bytes per 128 KiB block), with slack.
constexpr uint64_t MaxZlibRatio = 1100;
constexpr uint64_t MaxZstdRatio = uint64_t(1) << 16;

std::string hex(uint64_t V) {
  char Buf[32];
  snprintf(Buf, sizeof(Buf), "0x%llx", static_cast<unsigned long long>(V));
  return Buf;
}

bool hasPrefix(const uint8_t *Bytes, size_t Size, const char *Magic,
               size_t MagicSize) {
  return Size >= MagicSize && std::memcmp(Bytes, Magic, MagicSize) == 0;
}

/// Parses the uncompressed bundle at Bytes: entries and the end of its data.
Status parseUncompressed(const uint8_t *Bytes, size_t Size,
                         std::vector<BundleEntry> &Entries, uint64_t &End) {
  if (!hasPrefix(Bytes, Size, BundleMagic, BundleMagicSize))
    return Status::error("not an offload bundle (bad magic)");
  size_t Pos = BundleMagicSize;
  if (Size - Pos < 8)
    return Status::error("truncated offload bundle header");
  uint64_t Count = readLE<uint64_t>(Bytes + Pos);
  Pos += 8;
  if (Count > (Size - Pos) / EntryFixedSize)
    return Status::error("offload bundle claims " + std::to_string(Count) +
                         " entries, more than its header can hold");
  Entries.clear();
  Entries.reserve(Count);
  End = 0;
  for (uint64_t I = 0; I < Count; ++I) {
    if (Size - Pos < EntryFixedSize)
      return Status::error("truncated offload bundle entry " +
                           std::to_string(I));
    BundleEntry E;
    E.Offset = readLE<uint64_t>(Bytes + Pos);
    E.Size = readLE<uint64_t>(Bytes + Pos + 8);
    uint64_t IdLen = readLE<uint64_t>(Bytes + Pos + 16);
    Pos += EntryFixedSize;
    if (IdLen > Size - Pos)
      return Status::error("offload bundle entry " + std::to_string(I) +
                           ": id runs past the end of the data");
    E.Id.assign(reinterpret_cast<const char *>(Bytes + Pos), IdLen);
    Pos += IdLen;
    if (E.Offset > Size || E.Size > Size - E.Offset)
      return Status::error("offload bundle entry " + quoteInput(E.Id) +
                           ": payload [" +
                           hex(E.Offset) + ", +" + hex(E.Size) +
                           ") is outside the " + std::to_string(Size) +
                           "-byte bundle");
    if (Status S = parseBundleEntryId(E.Id, E))
      return S;
    End = std::max(End, E.Offset + E.Size);
    Entries.push_back(std::move(E));
  }
  End = std::max<uint64_t>(End, Pos);
  return Status::ok();
}

/// Inflates a zlib stream of unknown compressed length; Consumed tells how
/// much input the stream used (CCOB v1 records no total size). With a null
/// Out the output goes to a small scratch buffer and is dropped, which finds
/// the stream's end without holding OutSize bytes.
Status inflateZlib(const uint8_t *In, size_t InSize, uint8_t *Out,
                   size_t OutSize, size_t &Consumed) {
  z_stream Z;
  std::memset(&Z, 0, sizeof(Z));
  if (inflateInit(&Z) != Z_OK)
    return Status::error("zlib: cannot initialize");
  int Ret = Z_OK;
  size_t InPos = 0, OutPos = 0;
  // zlib counts in uInt; feed in chunks so > 4 GiB inputs stay correct.
  constexpr size_t Chunk = size_t(1) << 30;
  std::vector<uint8_t> Scratch(Out ? 0 : std::min<size_t>(OutSize, 1 << 16));
  while (Ret == Z_OK) {
    if (Z.avail_in == 0 && InPos < InSize) {
      Z.next_in = const_cast<Bytef *>(In + InPos);
      Z.avail_in = static_cast<uInt>(std::min(Chunk, InSize - InPos));
      InPos += Z.avail_in;
    }
    if (Z.avail_out == 0 && OutPos < OutSize) {
      Z.next_out = Out ? Out + OutPos : Scratch.data();
      Z.avail_out = static_cast<uInt>(
          std::min(Out ? Chunk : Scratch.size(), OutSize - OutPos));
      OutPos += Z.avail_out;
    }
    uInt AvailIn = Z.avail_in, AvailOut = Z.avail_out;
    Ret = inflate(&Z, Z_NO_FLUSH);
    if (Ret == Z_BUF_ERROR && AvailIn == Z.avail_in && AvailOut == Z.avail_out)
      break; // no progress possible: truncated input or output too small
  }
  uint64_t TotalOut = OutPos - Z.avail_out;
  Consumed = InPos - Z.avail_in;
  inflateEnd(&Z);
  if (Ret != Z_STREAM_END)
    return Status::error(std::string("zlib: corrupt or truncated stream") +
                         (Z.msg ? std::string(" (") + Z.msg + ")" : ""));
  if (TotalOut != OutSize)
    return Status::error("zlib: stream decompresses to " +
                         std::to_string(TotalOut) + " bytes, header says " +
                         std::to_string(OutSize));
  return Status::ok();
}

/// A CCOB header (FORMAT.md §2.2), checked against the bytes after it.
struct CcobHeader {
  unsigned Version = 0;
  unsigned Method = 0; ///< 0 zlib, 1 zstd
  size_t HeaderSize = 0;
  uint64_t TotalSize = 0; ///< v2 and v3 only
  uint64_t RawSize = 0;
  const uint8_t *Payload = nullptr;
  size_t PayloadAvail = 0;
  size_t FrameSize = 0; ///< zstd only: the frame's compressed size
};

/// Reads and checks the header of the CCOB at Bytes, including what its
/// compressed data can possibly expand to, so that a corrupt size field
/// cannot make a caller allocate gigabytes. Decompresses nothing.
Status readCcobHeader(const uint8_t *Bytes, size_t Size, CcobHeader &H) {
  if (Size < 8)
    return Status::error("truncated CCOB header");
  H.Version = readLE<uint16_t>(Bytes + 4);
  H.Method = readLE<uint16_t>(Bytes + 6);
  switch (H.Version) {
  case 1:
    H.HeaderSize = 20;
    break;
  case 2:
    H.HeaderSize = 24;
    break;
  case 3:
    H.HeaderSize = 32;
    break;
  default:
    return Status::error("unsupported CCOB version " +
                         std::to_string(H.Version));
  }
  if (Size < H.HeaderSize)
    return Status::error("truncated CCOB v" + std::to_string(H.Version) +
                         " header");
  if (H.Version == 1) {
    H.RawSize = readLE<uint32_t>(Bytes + 8);
  } else if (H.Version == 2) {
    H.TotalSize = readLE<uint32_t>(Bytes + 8);
    H.RawSize = readLE<uint32_t>(Bytes + 12);
  } else {
    H.TotalSize = readLE<uint64_t>(Bytes + 8);
    H.RawSize = readLE<uint64_t>(Bytes + 16);
  }
  if (H.Method != 0 && H.Method != 1)
    return Status::error("unknown CCOB compression method " +
                         std::to_string(H.Method));
  if (H.Version >= 2 && (H.TotalSize < H.HeaderSize || H.TotalSize > Size))
    return Status::error("CCOB total size " + std::to_string(H.TotalSize) +
                         " does not fit the " + std::to_string(Size) +
                         " available bytes");
  if (H.RawSize > MaxUncompressedSize)
    return Status::error("CCOB uncompressed size " +
                         std::to_string(H.RawSize) + " is implausibly large");
  H.Payload = Bytes + H.HeaderSize;
  H.PayloadAvail = (H.Version >= 2 ? H.TotalSize : Size) - H.HeaderSize;

  if (H.Method == 1) {
    H.FrameSize = ZSTD_findFrameCompressedSize(H.Payload, H.PayloadAvail);
    if (ZSTD_isError(H.FrameSize))
      return Status::error(std::string("zstd: ") +
                           ZSTD_getErrorName(H.FrameSize));
    unsigned long long Content =
        ZSTD_getFrameContentSize(H.Payload, H.FrameSize);
    if (Content != ZSTD_CONTENTSIZE_UNKNOWN && Content != H.RawSize)
      return Status::error("zstd frame holds " + std::to_string(Content) +
                           " bytes, CCOB header says " +
                           std::to_string(H.RawSize));
    if (H.RawSize / MaxZstdRatio > H.FrameSize)
      return Status::error("CCOB uncompressed size " +
                           std::to_string(H.RawSize) +
                           " is implausibly large for its zstd frame");
  } else if (H.RawSize / MaxZlibRatio > H.PayloadAvail) {
    return Status::error("CCOB uncompressed size " +
                         std::to_string(H.RawSize) +
                         " is implausibly large for its zlib stream");
  }
  return Status::ok();
}

BundleCompression compressionOf(const CcobHeader &H) {
  return H.Method == 0 ? BundleCompression::Zlib : BundleCompression::Zstd;
}

Status decodeCcob(const uint8_t *Bytes, size_t Size, Bundle &Out) {
  CcobHeader H;
  if (Status S = readCcobHeader(Bytes, Size, H))
    return S;
  try {
    Out.Data.assign(H.RawSize, 0);
  } catch (const std::bad_alloc &) {
    return Status::error("out of memory for a " + std::to_string(H.RawSize) +
                         "-byte bundle");
  }
  size_t Consumed = 0;
  if (H.Method == 0) {
    if (Status S = inflateZlib(H.Payload, H.PayloadAvail, Out.Data.data(),
                               H.RawSize, Consumed))
      return S;
  } else {
    size_t Got =
        ZSTD_decompress(Out.Data.data(), H.RawSize, H.Payload, H.FrameSize);
    if (ZSTD_isError(Got))
      return Status::error(std::string("zstd: ") + ZSTD_getErrorName(Got));
    if (Got != H.RawSize)
      return Status::error("zstd frame decompresses to " +
                           std::to_string(Got) + " bytes, CCOB header says " +
                           std::to_string(H.RawSize));
    Consumed = H.FrameSize;
  }
  Out.Compression = compressionOf(H);
  Out.CcobVersion = H.Version;
  Out.EncodedSize = H.Version >= 2 ? H.TotalSize : H.HeaderSize + Consumed;

  uint64_t End;
  if (Status S = parseUncompressed(Out.Data.data(), Out.Data.size(),
                                   Out.Entries, End))
    return Status::error("CCOB payload: " + S.message());
  return Status::ok();
}

/// The extent of the bundle at the start of Bytes (see scanBundleSection).
Status scanBundle(const uint8_t *Bytes, size_t Size, BundleExtent &Out) {
  if (!hasPrefix(Bytes, Size, CcobMagic, CcobMagicSize)) {
    if (Status S = parseUncompressed(Bytes, Size, Out.Entries, Out.EncodedSize))
      return S;
    Out.UncompressedSize = Out.EncodedSize;
    return Status::ok();
  }
  CcobHeader H;
  if (Status S = readCcobHeader(Bytes, Size, H))
    return S;
  Out.Compression = compressionOf(H);
  Out.CcobVersion = H.Version;
  Out.UncompressedSize = H.RawSize;
  if (H.Version >= 2) {
    Out.EncodedSize = H.TotalSize;
  } else if (H.Method == 1) {
    Out.EncodedSize = H.HeaderSize + H.FrameSize;
  } else {
    size_t Consumed = 0;
    if (Status S = inflateZlib(H.Payload, H.PayloadAvail, nullptr, H.RawSize,
                               Consumed))
      return S;
    Out.EncodedSize = H.HeaderSize + Consumed;
  }
  return Status::ok();
}

} // namespace

std::vector<const BundleEntry *> Bundle::deviceEntries() const {
  std::vector<const BundleEntry *> Result;
  for (const BundleEntry &E : Entries)
    if (E.isDevice())
      Result.push_back(&E);
  return Result;
}

bool kpack::isBundle(const uint8_t *Bytes, size_t Size) {
  return hasPrefix(Bytes, Size, BundleMagic, BundleMagicSize) ||
         hasPrefix(Bytes, Size, CcobMagic, CcobMagicSize);
}

Status kpack::decodeBundle(const uint8_t *Bytes, size_t Size, Bundle &Out) {
  Out = Bundle();
  if (hasPrefix(Bytes, Size, CcobMagic, CcobMagicSize))
    return decodeCcob(Bytes, Size, Out);
  uint64_t End;
  if (Status S = parseUncompressed(Bytes, Size, Out.Entries, End))
    return S;
  Out.EncodedSize = End;
  Out.Data.assign(Bytes, Bytes + End);
  return Status::ok();
}

Status kpack::scanBundleSection(const uint8_t *Bytes, size_t Size,
                                std::vector<BundleExtent> &Out,
                                uint64_t Align) {
  Out.clear();
  uint64_t Pos = 0;
  while (Pos < Size) {
    if (isBundle(Bytes + Pos, Size - Pos)) {
      BundleExtent E;
      if (Status S = scanBundle(Bytes + Pos, Size - Pos, E))
        return Status::error("bundle at section offset " + hex(Pos) + ": " +
                             S.message());
      E.SectionOffset = Pos;
      Pos += std::max<uint64_t>(E.EncodedSize, 1);
      Out.push_back(std::move(E));
    }
    // Between bundles only zero padding up to the next aligned offset.
    uint64_t Next = std::min<uint64_t>(alignTo(Pos, Align), Size);
    if (Next == Pos && Pos < Size && !isBundle(Bytes + Pos, Size - Pos))
      Next = std::min<uint64_t>(alignTo(Pos + 1, Align), Size);
    for (; Pos < Next; ++Pos)
      if (Bytes[Pos] != 0)
        return Status::error("unexpected non-zero byte at section offset " +
                             hex(Pos) + " (not an offload bundle)");
  }
  return Status::ok();
}

Status kpack::decodeBundleSection(const uint8_t *Bytes, size_t Size,
                                  std::vector<Bundle> &Out, uint64_t Align) {
  Out.clear();
  std::vector<BundleExtent> Extents;
  if (Status S = scanBundleSection(Bytes, Size, Extents, Align))
    return S;
  for (const BundleExtent &E : Extents) {
    Bundle B;
    if (Status S = decodeBundle(Bytes + E.SectionOffset,
                                Size - E.SectionOffset, B))
      return Status::error("bundle at section offset " +
                           hex(E.SectionOffset) + ": " + S.message());
    B.SectionOffset = E.SectionOffset;
    Out.push_back(std::move(B));
  }
  return Status::ok();
}

Status kpack::parseBundleEntryId(const std::string &Id, BundleEntry &Out) {
  // <kind>-<arch>-<vendor>-<os>-<env>[-<target id>]; the target ID may itself
  // contain '-' ("gfx11-generic"), so split on the first five dashes only.
  size_t KindEnd = Id.find('-');
  if (KindEnd == std::string::npos || KindEnd == 0)
    return Status::error("malformed bundle entry id " + quoteInput(Id));
  std::string Rest = Id.substr(KindEnd + 1);
  size_t Pos = 0;
  unsigned Dashes = 0;
  while (Dashes < 4) {
    size_t Dash = Rest.find('-', Pos);
    if (Dash == std::string::npos)
      break;
    Pos = Dash + 1;
    ++Dashes;
  }
  std::string Triple, Target;
  if (Dashes == 4) {
    Triple = Rest.substr(0, Pos - 1);
    Target = Rest.substr(Pos);
  } else {
    Triple = Rest;
  }
  while (!Triple.empty() && Triple.back() == '-')
    Triple.pop_back();
  if (Triple.empty())
    return Status::error("bundle entry id " + quoteInput(Id) +
                         " has no target triple");
  Out.Id = Id;
  Out.Kind = Id.substr(0, KindEnd);
  Out.Triple = std::move(Triple);
  Out.TargetId = std::move(Target);
  return Status::ok();
}
