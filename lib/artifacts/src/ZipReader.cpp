//===- ZipReader.cpp - Validating zip reader ------------------------------===//
//
// The whole structure is validated when the file is opened (end records,
// central directory, local headers, names, overlaps), so that everything
// later code touches is in bounds; contents are checked (size, CRC-32,
// deflate stream) while they are read. Layouts: ZipFormat.h.
//
//===----------------------------------------------------------------------===//

#include "kpack/Zip.h"

#include "ZipFormat.h"

#include "kpack/LLVMError.h"
#include "kpack/Quote.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <zlib.h>

using namespace llvm;
using namespace kpack;
namespace fmt = kpack::zipfmt;

namespace {

constexpr size_t ChunkSize = size_t(1) << 20;

uint16_t rd16(const uint8_t *P) { return support::endian::read16le(P); }
uint32_t rd32(const uint8_t *P) { return support::endian::read32le(P); }
uint64_t rd64(const uint8_t *P) { return support::endian::read64le(P); }

std::string quoteName(StringRef Name) {
  return quoteInput(std::string_view(Name.data(), Name.size()));
}

/// Why Name cannot be an entry of a wheel, or "" if it can: relative,
/// '/'-separated, no empty, "." or ".." component (a trailing '/' marks a
/// directory), no NUL or backslash.
std::string badNameReason(StringRef Name) {
  if (Name.empty())
    return "empty name";
  if (Name.contains('\0'))
    return "NUL in name";
  if (Name.contains('\\'))
    return "backslash in name";
  if (Name.front() == '/')
    return "absolute path";
  StringRef Rest = Name;
  if (Rest.back() == '/')
    Rest = Rest.drop_back();
  SmallVector<StringRef, 8> Parts;
  Rest.split(Parts, '/');
  for (StringRef Part : Parts) {
    if (Part.empty())
      return "empty path component";
    if (Part == "." || Part == "..")
      return "'" + Part.str() + "' path component";
  }
  return "";
}

} // namespace

StringRef kpack::zipMethodName(ZipMethod M) {
  return M == ZipMethod::Stored ? "stored" : "deflate";
}

uint32_t ZipEntry::unixMode() const {
  if ((VersionMadeBy >> 8) != fmt::HostUnix)
    return 0;
  return ExternalAttributes >> 16;
}

uint32_t kpack::zipFileMode(uint32_t Mode) {
  uint32_t Permissions = Mode & 07777;
  return Permissions ? (0100000 | Permissions) : ZipDefaultFileMode;
}

uint32_t kpack::zipCrc32(ArrayRef<uint8_t> Data, uint32_t Crc) {
  uLong C = Crc;
  while (!Data.empty()) {
    size_t N = std::min<size_t>(Data.size(), 1u << 30);
    C = crc32(C, Data.data(), static_cast<uInt>(N));
    Data = Data.drop_front(N);
  }
  return static_cast<uint32_t>(C);
}

Expected<ZipReader> ZipReader::open(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(
      Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeError("cannot read '" + Path + "': " + Buf.getError().message());
  return openBuffer(std::move(*Buf));
}

Expected<ZipReader>
ZipReader::openBuffer(std::unique_ptr<MemoryBuffer> Buffer) {
  ZipReader R;
  R.Buffer = std::move(Buffer);
  if (Error E = R.parse())
    return E;
  return R;
}

const ZipEntry *ZipReader::find(StringRef Name) const {
  auto It = ByName.find(Name);
  return It == ByName.end() ? nullptr : &Entries[It->second];
}

ArrayRef<uint8_t> ZipReader::rawData(const ZipEntry &E) const {
  const uint8_t *Base =
      reinterpret_cast<const uint8_t *>(Buffer->getBufferStart());
  return ArrayRef<uint8_t>(Base + E.DataOffset, E.CompressedSize);
}

Error ZipReader::parse() {
  const uint8_t *Data =
      reinterpret_cast<const uint8_t *>(Buffer->getBufferStart());
  const uint64_t Size = Buffer->getBufferSize();
  auto Fail = [&](const Twine &Msg) {
    return makeError("'" + name() + "': " + Msg);
  };
  if (Size < fmt::EndSize)
    return Fail("not a zip file (" + Twine(Size) +
                " bytes, smaller than an end of central directory record)");

  // The end record: the last signature whose comment reaches exactly the
  // end of the file.
  uint64_t EndPos = 0;
  bool FoundEnd = false;
  uint64_t Lowest = Size - fmt::EndSize > fmt::MaxCommentSize
                        ? Size - fmt::EndSize - fmt::MaxCommentSize
                        : 0;
  for (uint64_t Pos = Size - fmt::EndSize + 1; Pos-- > Lowest;) {
    if (rd32(Data + Pos) == fmt::EndSig &&
        Pos + fmt::EndSize + rd16(Data + Pos + 20) == Size) {
      EndPos = Pos;
      FoundEnd = true;
      break;
    }
  }
  if (!FoundEnd)
    return Fail("not a zip file (no end of central directory record)");

  const uint8_t *End = Data + EndPos;
  uint64_t Disk = rd16(End + 4), CdDisk = rd16(End + 6);
  uint64_t EntriesOnDisk = rd16(End + 8), TotalEntries = rd16(End + 10);
  uint64_t CdSize = rd32(End + 12), CdOffset = rd32(End + 16);
  uint64_t CdEnd = EndPos;

  // A zip64 locator right before the end record takes precedence.
  if (EndPos >= fmt::Zip64LocatorSize &&
      rd32(Data + EndPos - fmt::Zip64LocatorSize) == fmt::Zip64LocatorSig) {
    uint64_t LocPos = EndPos - fmt::Zip64LocatorSize;
    const uint8_t *Loc = Data + LocPos;
    uint64_t Z64Pos = rd64(Loc + 8);
    if (rd32(Loc + 4) != 0 || rd32(Loc + 16) != 1)
      return Fail("zips spanning several disks are not supported");
    if (Z64Pos > LocPos || LocPos - Z64Pos < fmt::Zip64EndSize)
      return Fail("zip64 end record offset " + Twine(Z64Pos) +
                  " out of bounds");
    const uint8_t *Z64 = Data + Z64Pos;
    if (rd32(Z64) != fmt::Zip64EndSig)
      return Fail("no zip64 end record at offset " + Twine(Z64Pos));
    uint64_t RecordSize = rd64(Z64 + 4);
    if (RecordSize != LocPos - Z64Pos - 12)
      return Fail("zip64 end record size " + Twine(RecordSize) +
                  " does not reach its locator");
    Disk = rd32(Z64 + 16);
    CdDisk = rd32(Z64 + 20);
    EntriesOnDisk = rd64(Z64 + 24);
    TotalEntries = rd64(Z64 + 32);
    CdSize = rd64(Z64 + 40);
    CdOffset = rd64(Z64 + 48);
    CdEnd = Z64Pos;
  }
  // Without a locator, all-ones fields are taken literally (a zip of
  // exactly 65535 entries needs no zip64); the checks below catch the rest.
  if (Disk != 0 || CdDisk != 0 || EntriesOnDisk != TotalEntries)
    return Fail("zips spanning several disks are not supported");
  if (CdOffset > CdEnd || CdSize != CdEnd - CdOffset)
    return Fail("central directory (offset " + Twine(CdOffset) + ", size " +
                Twine(CdSize) + ") does not end where the end record begins (" +
                Twine(CdEnd) + "): truncated, or data prepended or appended");
  if (TotalEntries > CdSize / fmt::CentralHeaderSize)
    return Fail(Twine(TotalEntries) + " entries cannot fit in a central "
                "directory of " + Twine(CdSize) + " bytes");

  Entries.reserve(TotalEntries);
  uint64_t Pos = CdOffset;
  for (uint64_t I = 0; I < TotalEntries; ++I) {
    auto EntryFail = [&](const Twine &Msg) {
      return Fail("central directory entry " + Twine(I) + ": " + Msg);
    };
    if (CdEnd - Pos < fmt::CentralHeaderSize)
      return EntryFail("truncated");
    const uint8_t *H = Data + Pos;
    if (rd32(H) != fmt::CentralHeaderSig)
      return EntryFail("bad signature");
    uint16_t Flags = rd16(H + 8), Method = rd16(H + 10);
    uint64_t NameLen = rd16(H + 28), ExtraLen = rd16(H + 30),
             CommentLen = rd16(H + 32);
    if (CdEnd - Pos - fmt::CentralHeaderSize < NameLen + ExtraLen + CommentLen)
      return EntryFail("name, extra field or comment beyond the central "
                       "directory");
    ZipEntry E;
    E.Name.assign(reinterpret_cast<const char *>(H + fmt::CentralHeaderSize),
                  NameLen);
    auto NamedFail = [&](const Twine &Msg) {
      return Fail("entry " + quoteName(E.Name) + ": " + Msg);
    };
    std::string Bad = badNameReason(E.Name);
    if (!Bad.empty())
      return NamedFail("invalid name (" + Bad + ")");
    if (Flags & (fmt::FlagEncrypted | fmt::FlagStrongEncryption |
                 fmt::FlagMaskedHeaders))
      return NamedFail("encrypted entries are not supported");
    if (Method != uint16_t(ZipMethod::Stored) &&
        Method != uint16_t(ZipMethod::Deflated))
      return NamedFail("compression method " + Twine(Method) +
                       " is not supported (only stored and deflate)");
    E.Method = static_cast<ZipMethod>(Method);
    E.VersionMadeBy = rd16(H + 4);
    E.Crc32 = rd32(H + 16);
    E.CompressedSize = rd32(H + 20);
    E.UncompressedSize = rd32(H + 24);
    uint64_t DiskStart = rd16(H + 34);
    E.ExternalAttributes = rd32(H + 38);
    E.HeaderOffset = rd32(H + 42);

    // Zip64 extra field: the 64-bit values of the fields set to all ones,
    // in this order.
    const uint8_t *X = H + fmt::CentralHeaderSize + NameLen;
    uint64_t XLeft = ExtraLen;
    bool SawZip64 = false;
    while (XLeft) {
      if (XLeft < 4)
        return NamedFail("truncated extra field");
      uint16_t Id = rd16(X), Len = rd16(X + 2);
      if (Len > XLeft - 4)
        return NamedFail("extra field longer than the extra data");
      if (Id == fmt::Zip64ExtraId && !SawZip64) {
        SawZip64 = true;
        const uint8_t *V = X + 4;
        uint64_t VLeft = Len;
        auto Take64 = [&](uint64_t &Field) -> bool {
          if (VLeft < 8)
            return false;
          Field = rd64(V);
          V += 8;
          VLeft -= 8;
          return true;
        };
        if ((E.UncompressedSize == fmt::Max32 && !Take64(E.UncompressedSize)) ||
            (E.CompressedSize == fmt::Max32 && !Take64(E.CompressedSize)) ||
            (E.HeaderOffset == fmt::Max32 && !Take64(E.HeaderOffset)))
          return NamedFail("zip64 extra field too short");
        if (DiskStart == fmt::Max16) {
          if (VLeft < 4)
            return NamedFail("zip64 extra field too short");
          DiskStart = rd32(V);
        }
      }
      X += 4 + Len;
      XLeft -= 4 + Len;
    }
    if (DiskStart != 0)
      return NamedFail("zips spanning several disks are not supported");
    if (E.Method == ZipMethod::Stored &&
        E.CompressedSize != E.UncompressedSize)
      return NamedFail("stored entry with compressed size " +
                       Twine(E.CompressedSize) + " != size " +
                       Twine(E.UncompressedSize));
    if (E.isDirectory() && E.UncompressedSize != 0)
      return NamedFail("directory entry with contents");

    // The local header must agree with the central directory.
    if (E.HeaderOffset > CdOffset ||
        CdOffset - E.HeaderOffset < fmt::LocalHeaderSize)
      return NamedFail("local header offset " + Twine(E.HeaderOffset) +
                       " outside the file's data");
    const uint8_t *L = Data + E.HeaderOffset;
    if (rd32(L) != fmt::LocalHeaderSig)
      return NamedFail("no local header at offset " + Twine(E.HeaderOffset));
    uint16_t LocalFlags = rd16(L + 6);
    if (LocalFlags & (fmt::FlagEncrypted | fmt::FlagStrongEncryption))
      return NamedFail("encrypted entries are not supported");
    if (rd16(L + 8) != Method)
      return NamedFail("local header method " + Twine(rd16(L + 8)) +
                       " differs from the central directory's (" +
                       Twine(Method) + ")");
    uint64_t LNameLen = rd16(L + 26), LExtraLen = rd16(L + 28);
    uint64_t Room = CdOffset - E.HeaderOffset - fmt::LocalHeaderSize;
    if (LNameLen + LExtraLen > Room)
      return NamedFail("local header beyond the file's data");
    if (StringRef(reinterpret_cast<const char *>(L + fmt::LocalHeaderSize),
                  LNameLen) != E.Name)
      return NamedFail("local header names another file (" +
                       quoteName(StringRef(
                           reinterpret_cast<const char *>(
                               L + fmt::LocalHeaderSize),
                           LNameLen)) +
                       ")");
    E.DataOffset = E.HeaderOffset + fmt::LocalHeaderSize + LNameLen + LExtraLen;
    if (E.CompressedSize > CdOffset - E.DataOffset)
      return NamedFail("data (" + Twine(E.CompressedSize) +
                       " bytes at offset " + Twine(E.DataOffset) +
                       ") beyond the file's data");

    if (!ByName.try_emplace(E.Name, Entries.size()).second)
      return NamedFail("duplicate entry");
    Entries.push_back(std::move(E));
    Pos += fmt::CentralHeaderSize + NameLen + ExtraLen + CommentLen;
  }
  if (Pos != CdEnd)
    return Fail("central directory has " + Twine(CdEnd - Pos) +
                " bytes after its " + Twine(TotalEntries) + " entries");

  // No two entries may share bytes (overlapping entries are how zip bombs
  // and parser-confusion attacks are built).
  std::vector<std::pair<uint64_t, size_t>> ByOffset;
  ByOffset.reserve(Entries.size());
  for (size_t I = 0; I < Entries.size(); ++I)
    ByOffset.push_back({Entries[I].HeaderOffset, I});
  llvm::sort(ByOffset);
  for (size_t I = 1; I < ByOffset.size(); ++I) {
    const ZipEntry &Prev = Entries[ByOffset[I - 1].second];
    const ZipEntry &Cur = Entries[ByOffset[I].second];
    if (Cur.HeaderOffset < Prev.DataOffset + Prev.CompressedSize)
      return Fail("entries " + quoteName(Prev.Name) + " and " +
                  quoteName(Cur.Name) + " overlap");
  }
  return Error::success();
}

Error ZipReader::read(const ZipEntry &E,
                      function_ref<Error(ArrayRef<uint8_t>)> Sink) const {
  auto Fail = [&](const Twine &Msg) {
    return makeError("'" + name() + "': entry " + quoteName(E.Name) + ": " +
                     Msg);
  };
  ArrayRef<uint8_t> Raw = rawData(E);
  uint32_t Crc = 0;
  uint64_t Total = 0;

  if (E.Method == ZipMethod::Stored) {
    while (!Raw.empty()) {
      ArrayRef<uint8_t> Chunk = Raw.take_front(ChunkSize);
      Crc = zipCrc32(Chunk, Crc);
      if (Error Err = Sink(Chunk))
        return Err;
      Raw = Raw.drop_front(Chunk.size());
    }
    Total = E.UncompressedSize;
  } else {
    z_stream Z{};
    if (inflateInit2(&Z, -MAX_WBITS) != Z_OK)
      return Fail("cannot initialise zlib");
    struct Ender {
      z_stream &Z;
      ~Ender() { inflateEnd(&Z); }
    } EndInflate{Z};
    std::vector<uint8_t> Out(ChunkSize);
    uint64_t Consumed = 0;
    bool Ended = false;
    while (!Ended) {
      if (Z.avail_in == 0 && Consumed < Raw.size()) {
        size_t N = std::min<uint64_t>(Raw.size() - Consumed, 1u << 30);
        Z.next_in = const_cast<Bytef *>(Raw.data() + Consumed);
        Z.avail_in = static_cast<uInt>(N);
        Consumed += N;
      }
      Z.next_out = Out.data();
      Z.avail_out = static_cast<uInt>(Out.size());
      int Ret = inflate(&Z, Z_NO_FLUSH);
      size_t Produced = Out.size() - Z.avail_out;
      if (Ret == Z_STREAM_END)
        Ended = true;
      else if (Ret == Z_BUF_ERROR && Z.avail_in == 0 && Consumed == Raw.size())
        return Fail("truncated deflate data");
      else if (Ret != Z_OK && Ret != Z_BUF_ERROR)
        return Fail("corrupt deflate data (" +
                    (Z.msg ? std::string(Z.msg)
                           : "zlib error " + std::to_string(Ret)) +
                    ")");
      if (Produced > E.UncompressedSize - Total)
        return Fail("inflates to more than its recorded size " +
                    Twine(E.UncompressedSize));
      if (Produced) {
        ArrayRef<uint8_t> Chunk(Out.data(), Produced);
        Crc = zipCrc32(Chunk, Crc);
        Total += Produced;
        if (Error Err = Sink(Chunk))
          return Err;
      }
    }
    if (Z.avail_in != 0 || Consumed != Raw.size())
      return Fail("deflate data ends before its recorded compressed size " +
                  Twine(E.CompressedSize));
  }
  if (Total != E.UncompressedSize)
    return Fail("inflates to " + Twine(Total) + " bytes, not its recorded " +
                Twine(E.UncompressedSize));
  if (Crc != E.Crc32)
    return Fail("CRC-32 mismatch (contents corrupt): computed " +
                Twine::utohexstr(Crc) + ", recorded " +
                Twine::utohexstr(E.Crc32));
  return Error::success();
}

Expected<std::string> ZipReader::readAll(const ZipEntry &E,
                                         uint64_t MaxSize) const {
  if (E.UncompressedSize > MaxSize)
    return makeError("'" + name() + "': entry " + quoteName(E.Name) + ": " +
                     Twine(E.UncompressedSize) + " bytes, more than the " +
                     Twine(MaxSize) + " allowed");
  std::string Out;
  Out.reserve(E.UncompressedSize);
  if (Error Err = read(E, [&](ArrayRef<uint8_t> Chunk) {
        Out.append(reinterpret_cast<const char *>(Chunk.data()), Chunk.size());
        return Error::success();
      }))
    return Err;
  return Out;
}
