//===- OffloadBundle.cpp - Minimal clang offload-bundle reader ------------===//
//
// Layouts (clang/lib/Driver/OffloadBundler.cpp):
//  - uncompressed: magic (24 bytes), entry count (u64), then per entry
//    offset (u64, from the bundle start), size (u64), ID length (u64), ID;
//  - compressed: "CCOB", version (u16), method (u16: 0 zlib, 1 zstd), then
//    v1: uncompressed size (u32), hash (u64);
//    v2: total file size (u32), uncompressed size (u32), hash (u64);
//    v3: total file size (u64), uncompressed size (u64), hash (u64);
//    then the compressed uncompressed-bundle.
//
//===----------------------------------------------------------------------===//

#include "OffloadBundle.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

namespace hipstandin {
namespace {

constexpr char BundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
constexpr size_t BundleMagicSize = sizeof(BundleMagic) - 1;
/// A larger bundle is treated as corrupt rather than allocated.
constexpr uint64_t MaxUncompressedSize = uint64_t(1) << 34;

template <typename T> T readLE(const uint8_t *P) {
  T V = 0;
  for (size_t I = 0; I < sizeof(T); ++I)
    V |= static_cast<T>(P[I]) << (8 * I);
  return V;
}

std::string readEntries(OffloadBundle &B) {
  const uint8_t *Data = B.Bytes.data();
  const size_t Size = B.Bytes.size();
  if (Size < BundleMagicSize + 8 ||
      std::memcmp(Data, BundleMagic, BundleMagicSize) != 0)
    return "not an offload bundle";
  uint64_t Count = readLE<uint64_t>(Data + BundleMagicSize);
  size_t Pos = BundleMagicSize + 8;
  if (Count > (Size - Pos) / 24)
    return "entry count " + std::to_string(Count) + " exceeds the bundle";
  for (uint64_t I = 0; I < Count; ++I) {
    if (Size - Pos < 24)
      return "truncated entry header";
    OffloadBundle::Entry E;
    E.Offset = readLE<uint64_t>(Data + Pos);
    E.Size = readLE<uint64_t>(Data + Pos + 8);
    uint64_t IdSize = readLE<uint64_t>(Data + Pos + 16);
    Pos += 24;
    if (IdSize > Size - Pos)
      return "entry ID outside the bundle";
    E.Id.assign(reinterpret_cast<const char *>(Data + Pos), IdSize);
    Pos += IdSize;
    while (!E.Id.empty() && E.Id.back() == '\0') // a stored terminator
      E.Id.pop_back();
    if (E.Offset > Size || E.Size > Size - E.Offset)
      return "entry '" + E.Id + "' lies outside the bundle";
    B.Entries.push_back(std::move(E));
  }
  return "";
}

std::string inflateZlib(const uint8_t *In, size_t InSize,
                        std::vector<uint8_t> &Out) {
  z_stream Z{};
  if (inflateInit(&Z) != Z_OK)
    return "zlib initialisation failed";
  size_t InPos = 0, OutPos = 0;
  int RC = Z_OK;
  while (RC == Z_OK) {
    const size_t Chunk = 1 << 30;
    if (Z.avail_in == 0 && InPos < InSize) {
      Z.next_in = const_cast<Bytef *>(In + InPos);
      Z.avail_in = static_cast<uInt>(std::min(Chunk, InSize - InPos));
      InPos += Z.avail_in;
    }
    if (Z.avail_out == 0) {
      if (OutPos == Out.size())
        break; // more output than announced
      Z.next_out = Out.data() + OutPos;
      Z.avail_out = static_cast<uInt>(std::min(Chunk, Out.size() - OutPos));
      OutPos += Z.avail_out;
    }
    RC = inflate(&Z, Z_NO_FLUSH);
    if (RC == Z_BUF_ERROR && Z.avail_in == 0 && InPos == InSize)
      break;
  }
  uLong Total = Z.total_out;
  inflateEnd(&Z);
  if (RC != Z_STREAM_END)
    return "zlib data is corrupt or truncated";
  if (Total != Out.size())
    return "zlib data decompresses to " + std::to_string(Total) +
           " bytes, not the announced " + std::to_string(Out.size());
  return "";
}

std::string decompressCcob(const uint8_t *Data, size_t Size, OffloadBundle &B) {
  if (Size < 8)
    return "truncated CCOB header";
  unsigned Version = readLE<uint16_t>(Data + 4);
  unsigned Method = readLE<uint16_t>(Data + 6);
  size_t Header = Version == 1 ? 20 : Version == 2 ? 24 : Version == 3 ? 32 : 0;
  if (!Header)
    return "unsupported CCOB version " + std::to_string(Version);
  if (Size < Header)
    return "truncated CCOB header";
  uint64_t Total = Size, Raw;
  if (Version == 1) {
    Raw = readLE<uint32_t>(Data + 8);
  } else if (Version == 2) {
    Total = readLE<uint32_t>(Data + 8);
    Raw = readLE<uint32_t>(Data + 12);
  } else {
    Total = readLE<uint64_t>(Data + 8);
    Raw = readLE<uint64_t>(Data + 16);
  }
  if (Total < Header || Total > Size)
    return "CCOB size " + std::to_string(Total) + " exceeds the readable " +
           std::to_string(Size) + " bytes";
  if (Raw > MaxUncompressedSize)
    return "CCOB uncompressed size " + std::to_string(Raw) + " is implausible";
  B.Compressed = true;
  B.CcobVersion = Version;
  const uint8_t *In = Data + Header;
  size_t InSize = Total - Header;
  // Check the announced size against the data before allocating it.
  if (Method == 0) {
    B.Compression = "zlib";
    // deflate never compresses better than 1032:1.
    if (Raw / 1032 > InSize)
      return "CCOB uncompressed size " + std::to_string(Raw) +
             " does not fit its zlib data";
    B.Bytes.resize(Raw);
    return inflateZlib(In, InSize, B.Bytes);
  }
  if (Method != 1)
    return "unknown CCOB compression method " + std::to_string(Method);
  B.Compression = "zstd";
  // v1 does not record the compressed size: the zstd frame does.
  size_t Frame = ZSTD_findFrameCompressedSize(In, InSize);
  if (ZSTD_isError(Frame))
    return std::string("zstd frame: ") + ZSTD_getErrorName(Frame);
  unsigned long long Content = ZSTD_getFrameContentSize(In, Frame);
  if (Content != ZSTD_CONTENTSIZE_UNKNOWN && Content != Raw)
    return "zstd frame holds " + std::to_string(Content) +
           " bytes, not the announced " + std::to_string(Raw);
  B.Bytes.resize(Raw);
  size_t Got = ZSTD_decompress(B.Bytes.data(), B.Bytes.size(), In, Frame);
  if (ZSTD_isError(Got))
    return std::string("zstd: ") + ZSTD_getErrorName(Got);
  if (Got != Raw)
    return "zstd data decompresses to " + std::to_string(Got) +
           " bytes, not the announced " + std::to_string(Raw);
  return "";
}

} // namespace

std::string readOffloadBundle(const uint8_t *Data, size_t Size,
                              OffloadBundle &Out, bool HeaderOnly) {
  Out = OffloadBundle();
  if (Size >= 4 && std::memcmp(Data, "CCOB", 4) == 0) {
    if (std::string E = decompressCcob(Data, Size, Out); !E.empty())
      return "compressed bundle: " + E;
    return readEntries(Out);
  }
  if (Size < BundleMagicSize + 8 ||
      std::memcmp(Data, BundleMagic, BundleMagicSize) != 0)
    return "not an offload bundle (no __CLANG_OFFLOAD_BUNDLE__ or CCOB magic)";
  // The bundle's own size: the end of its header and of its last entry.
  uint64_t Count = readLE<uint64_t>(Data + BundleMagicSize);
  size_t Pos = BundleMagicSize + 8;
  uint64_t End = Pos;
  if (Count > (Size - Pos) / 24)
    return "entry count " + std::to_string(Count) + " exceeds the bundle";
  for (uint64_t I = 0; I < Count; ++I) {
    if (Size - Pos < 24)
      return "truncated entry header";
    uint64_t Offset = readLE<uint64_t>(Data + Pos);
    uint64_t EntrySize = readLE<uint64_t>(Data + Pos + 8);
    uint64_t IdSize = readLE<uint64_t>(Data + Pos + 16);
    if (IdSize > Size - Pos - 24)
      return "entry ID outside the bundle";
    if (HeaderOnly)
      Out.Entries.push_back(
          {std::string(reinterpret_cast<const char *>(Data + Pos + 24), IdSize),
           Offset, EntrySize});
    Pos += 24 + IdSize;
    if (Offset > Size || EntrySize > Size - Offset)
      return "entry " + std::to_string(I) + " lies outside the readable memory";
    End = std::max<uint64_t>(End, std::max<uint64_t>(Pos, Offset + EntrySize));
  }
  if (HeaderOnly) {
    Out.Source = Data;
    return "";
  }
  Out.Bytes.assign(Data, Data + End);
  return readEntries(Out);
}

} // namespace hipstandin
