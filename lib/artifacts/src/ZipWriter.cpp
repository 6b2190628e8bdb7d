//===- ZipWriter.cpp - Deterministic zip writer ---------------------------===//
//
// Local header, data, and at commit the central directory and end records
// (zip64 ones only where needed), as Python's zipfile lays them out, with a
// fixed timestamp. Layouts: ZipFormat.h.
//
//===----------------------------------------------------------------------===//

#include "kpack/Zip.h"

#include "ZipFormat.h"

#include "kpack/LLVMError.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

using namespace llvm;
using namespace kpack;
namespace fmt = kpack::zipfmt;

namespace {

constexpr size_t ChunkSize = size_t(1) << 20;

struct Bytes {
  std::vector<uint8_t> V;
  void u16(uint16_t X) {
    uint8_t B[2];
    support::endian::write16le(B, X);
    V.insert(V.end(), B, B + 2);
  }
  void u32(uint32_t X) {
    uint8_t B[4];
    support::endian::write32le(B, X);
    V.insert(V.end(), B, B + 4);
  }
  void u64(uint64_t X) {
    uint8_t B[8];
    support::endian::write64le(B, X);
    V.insert(V.end(), B, B + 8);
  }
  void str(StringRef S) { V.insert(V.end(), S.begin(), S.end()); }
};

bool isAscii(StringRef S) {
  return llvm::all_of(S, [](char C) { return (unsigned char)C < 0x80; });
}

/// Raw deflate (no zlib header), as zip stores it.
class Deflater {
public:
  explicit Deflater(int Level) {
    Ok = deflateInit2(&Z, Level, Z_DEFLATED, -MAX_WBITS, 8,
                      Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~Deflater() {
    if (Ok)
      deflateEnd(&Z);
  }
  bool ok() const { return Ok; }
  /// Compresses In (the last chunk if Finish), handing output to Out.
  Error feed(ArrayRef<uint8_t> In, bool Finish,
             function_ref<Error(ArrayRef<uint8_t>)> Out) {
    std::vector<uint8_t> Buf(ChunkSize);
    do {
      size_t N = std::min<size_t>(In.size(), 1u << 30);
      Z.next_in = const_cast<Bytef *>(In.data());
      Z.avail_in = static_cast<uInt>(N);
      In = In.drop_front(N);
      int Flush = (Finish && In.empty()) ? Z_FINISH : Z_NO_FLUSH;
      int Ret;
      do {
        Z.next_out = Buf.data();
        Z.avail_out = static_cast<uInt>(Buf.size());
        Ret = deflate(&Z, Flush);
        if (Ret == Z_STREAM_ERROR)
          return makeError("zlib deflate failed");
        size_t Produced = Buf.size() - Z.avail_out;
        if (Produced)
          if (Error E = Out(ArrayRef<uint8_t>(Buf.data(), Produced)))
            return E;
      } while (Z.avail_out == 0 || (Flush == Z_FINISH && Ret != Z_STREAM_END));
    } while (!In.empty());
    return Error::success();
  }

private:
  z_stream Z{};
  bool Ok = false;
};

} // namespace

struct ZipWriter::Impl {
  struct Central {
    std::string Name;
    ZipMethod Method;
    uint16_t Flags;
    uint32_t Crc;
    uint64_t CompressedSize, UncompressedSize, Offset;
    uint32_t Mode;
  };
  ZipWriterOptions Options;
  AtomicFile File;
  std::vector<Central> Entries;
  StringSet<> Names;
  bool Done = false;

  Error status(const Status &S) { return toError(S); }

  Error write(ArrayRef<uint8_t> B) {
    return toError(File.write(B.data(), B.size()));
  }

  /// The local header of an entry. With Zip64, the sizes live in a zip64
  /// extra field (both, as the format requires in local headers).
  static Bytes localHeader(StringRef Name, ZipMethod Method, uint16_t Flags,
                           uint32_t Crc, uint64_t CSize, uint64_t USize,
                           bool Zip64) {
    Bytes H;
    H.u32(fmt::LocalHeaderSig);
    H.u16(Zip64 ? fmt::VersionZip64 : fmt::VersionDeflate);
    H.u16(Flags);
    H.u16(static_cast<uint16_t>(Method));
    H.u16(fmt::FixedDosTime);
    H.u16(fmt::FixedDosDate);
    H.u32(Crc);
    H.u32(Zip64 ? fmt::Max32 : static_cast<uint32_t>(CSize));
    H.u32(Zip64 ? fmt::Max32 : static_cast<uint32_t>(USize));
    H.u16(static_cast<uint16_t>(Name.size()));
    H.u16(Zip64 ? 20 : 0);
    H.str(Name);
    if (Zip64) {
      H.u16(fmt::Zip64ExtraId);
      H.u16(16);
      H.u64(USize);
      H.u64(CSize);
    }
    return H;
  }

  Error checkName(StringRef Name) {
    if (Done)
      return makeError("zip '" + File.path() + "' already committed");
    if (Name.empty() || Name.size() > fmt::Max16)
      return makeError("zip entry name of " + Twine(Name.size()) +
                       " bytes cannot be written");
    if (!Names.insert(Name).second)
      return makeError("duplicate zip entry '" + Name + "' in '" +
                       File.path() + "'");
    return Error::success();
  }

  uint16_t flagsFor(StringRef Name) const {
    return isAscii(Name) ? 0 : fmt::FlagUtf8;
  }
};

ZipWriter::ZipWriter() : P(std::make_unique<Impl>()) {}
ZipWriter::ZipWriter(ZipWriter &&) = default;
ZipWriter &ZipWriter::operator=(ZipWriter &&) = default;
ZipWriter::~ZipWriter() = default;

Expected<ZipWriter> ZipWriter::create(StringRef Path,
                                      ZipWriterOptions Options) {
  if (Options.DeflateLevel < 0 || Options.DeflateLevel > 9)
    return makeError("deflate level " + Twine(Options.DeflateLevel) +
                     " out of range 0-9");
  ZipWriter W;
  W.P->Options = Options;
  if (Status S = W.P->File.open(Path.str()))
    return toError(S);
  return W;
}

uint64_t ZipWriter::size() const { return P->File.offset(); }

Error ZipWriter::add(StringRef Name, ArrayRef<uint8_t> Data, ZipMethod Method,
                     uint32_t Mode) {
  if (Error E = P->checkName(Name))
    return E;
  uint32_t Crc = zipCrc32(Data);
  std::vector<uint8_t> Deflated;
  ArrayRef<uint8_t> Stored = Data;
  if (Method == ZipMethod::Deflated) {
    Deflater D(P->Options.DeflateLevel);
    if (!D.ok())
      return makeError("cannot initialise zlib");
    if (Error E = D.feed(Data, /*Finish=*/true, [&](ArrayRef<uint8_t> Out) {
          Deflated.insert(Deflated.end(), Out.begin(), Out.end());
          return Error::success();
        }))
      return E;
    Stored = Deflated;
  }
  bool Zip64 = P->Options.ForceZip64 || Data.size() >= fmt::Max32 ||
               Stored.size() >= fmt::Max32;
  uint64_t Offset = P->File.offset();
  uint16_t Flags = P->flagsFor(Name);
  Bytes H = Impl::localHeader(Name, Method, Flags, Crc, Stored.size(),
                              Data.size(), Zip64);
  if (Error E = P->write(H.V))
    return E;
  if (Error E = P->write(Stored))
    return E;
  P->Entries.push_back({Name.str(), Method, Flags, Crc, Stored.size(),
                        Data.size(), Offset, Mode});
  return Error::success();
}

Error ZipWriter::addFile(StringRef Name, StringRef Path, ZipMethod Method,
                         uint32_t Mode) {
  if (Error E = P->checkName(Name))
    return E;
  int Fd = ::open(Path.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return makeError("cannot open '" + Path + "': " + std::strerror(errno));
  struct Closer {
    int Fd;
    ~Closer() { ::close(Fd); }
  } Close{Fd};
  struct stat St;
  if (::fstat(Fd, &St) != 0)
    return makeError("cannot stat '" + Path + "': " + std::strerror(errno));
  uint64_t USize = static_cast<uint64_t>(St.st_size);
  // Python's rule: deflate may grow incompressible data a little, so a
  // file above 95% of the 32-bit limit reserves the zip64 sizes.
  bool Zip64 = P->Options.ForceZip64 ||
               static_cast<double>(USize) * 1.05 > double(fmt::Max32);
  uint64_t Offset = P->File.offset();
  uint16_t Flags = P->flagsFor(Name);
  Bytes H = Impl::localHeader(Name, Method, Flags, 0, 0, 0, Zip64);
  if (Error E = P->write(H.V))
    return E;

  uint32_t Crc = 0;
  uint64_t Read = 0, CSize = 0;
  Deflater D(P->Options.DeflateLevel);
  if (Method == ZipMethod::Deflated && !D.ok())
    return makeError("cannot initialise zlib");
  auto Out = [&](ArrayRef<uint8_t> B) {
    CSize += B.size();
    return P->write(B);
  };
  std::vector<uint8_t> Buf(ChunkSize);
  while (true) {
    ssize_t N = ::read(Fd, Buf.data(), Buf.size());
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return makeError("cannot read '" + Path + "': " + std::strerror(errno));
    }
    ArrayRef<uint8_t> Chunk(Buf.data(), static_cast<size_t>(N));
    Read += Chunk.size();
    Crc = zipCrc32(Chunk, Crc);
    bool Last = N == 0;
    if (Method == ZipMethod::Deflated) {
      if (Error E = D.feed(Chunk, Last, Out))
        return E;
    } else if (!Chunk.empty()) {
      if (Error E = Out(Chunk))
        return E;
    }
    if (Last)
      break;
  }
  if (Read != USize)
    return makeError("'" + Path + "' changed size while it was read");
  if (!Zip64 && CSize >= fmt::Max32)
    return makeError("internal error: zip64 needed but not reserved for '" +
                     Name + "'");
  // Patch the CRC and sizes into the local header.
  Bytes Fixed = Impl::localHeader(Name, Method, Flags, Crc, CSize, USize, Zip64);
  if (Status S = P->File.writeAt(Offset, Fixed.V.data(), Fixed.V.size()))
    return toError(S);
  P->Entries.push_back({Name.str(), Method, Flags, Crc, CSize, USize, Offset,
                        Mode});
  return Error::success();
}

Error ZipWriter::addRaw(StringRef Name, const ZipReader &From,
                        const ZipEntry &E, uint32_t Mode) {
  if (Error Err = P->checkName(Name))
    return Err;
  ArrayRef<uint8_t> Raw = From.rawData(E);
  bool Zip64 = P->Options.ForceZip64 || E.UncompressedSize >= fmt::Max32 ||
               E.CompressedSize >= fmt::Max32;
  uint64_t Offset = P->File.offset();
  uint16_t Flags = P->flagsFor(Name);
  Bytes H = Impl::localHeader(Name, E.Method, Flags, E.Crc32, E.CompressedSize,
                              E.UncompressedSize, Zip64);
  if (Error Err = P->write(H.V))
    return Err;
  while (!Raw.empty()) {
    ArrayRef<uint8_t> Chunk = Raw.take_front(ChunkSize);
    if (Error Err = P->write(Chunk))
      return Err;
    Raw = Raw.drop_front(Chunk.size());
  }
  P->Entries.push_back({Name.str(), E.Method, Flags, E.Crc32,
                        E.CompressedSize, E.UncompressedSize, Offset, Mode});
  return Error::success();
}

Error ZipWriter::commit() {
  if (P->Done)
    return makeError("zip '" + P->File.path() + "' already committed");
  bool Force = P->Options.ForceZip64;
  uint64_t CdOffset = P->File.offset();
  Bytes Cd;
  for (const Impl::Central &C : P->Entries) {
    bool BigU = Force || C.UncompressedSize >= fmt::Max32;
    bool BigC = Force || C.CompressedSize >= fmt::Max32;
    bool BigO = Force || C.Offset >= fmt::Max32;
    uint16_t ExtraLen = (BigU + BigC + BigO) * 8;
    bool Zip64 = ExtraLen != 0;
    uint16_t Version = Zip64 ? fmt::VersionZip64 : fmt::VersionDeflate;
    Cd.u32(fmt::CentralHeaderSig);
    Cd.u16(static_cast<uint16_t>((fmt::HostUnix << 8) | Version));
    Cd.u16(Version);
    Cd.u16(C.Flags);
    Cd.u16(static_cast<uint16_t>(C.Method));
    Cd.u16(fmt::FixedDosTime);
    Cd.u16(fmt::FixedDosDate);
    Cd.u32(C.Crc);
    Cd.u32(BigC ? fmt::Max32 : static_cast<uint32_t>(C.CompressedSize));
    Cd.u32(BigU ? fmt::Max32 : static_cast<uint32_t>(C.UncompressedSize));
    Cd.u16(static_cast<uint16_t>(C.Name.size()));
    Cd.u16(Zip64 ? ExtraLen + 4 : 0);
    Cd.u16(0); // comment
    Cd.u16(0); // disk
    Cd.u16(0); // internal attributes
    Cd.u32(C.Mode << 16);
    Cd.u32(BigO ? fmt::Max32 : static_cast<uint32_t>(C.Offset));
    Cd.str(C.Name);
    if (Zip64) {
      Cd.u16(fmt::Zip64ExtraId);
      Cd.u16(ExtraLen);
      if (BigU)
        Cd.u64(C.UncompressedSize);
      if (BigC)
        Cd.u64(C.CompressedSize);
      if (BigO)
        Cd.u64(C.Offset);
    }
  }
  uint64_t CdSize = Cd.V.size();
  uint64_t Count = P->Entries.size();
  Bytes End;
  if (Force || Count >= fmt::Max16 || CdSize >= fmt::Max32 ||
      CdOffset >= fmt::Max32) {
    uint64_t Z64Offset = CdOffset + CdSize;
    End.u32(fmt::Zip64EndSig);
    End.u64(fmt::Zip64EndSize - 12);
    End.u16((fmt::HostUnix << 8) | fmt::VersionZip64);
    End.u16(fmt::VersionZip64);
    End.u32(0);
    End.u32(0);
    End.u64(Count);
    End.u64(Count);
    End.u64(CdSize);
    End.u64(CdOffset);
    End.u32(fmt::Zip64LocatorSig);
    End.u32(0);
    End.u64(Z64Offset);
    End.u32(1);
  }
  End.u32(fmt::EndSig);
  End.u16(0);
  End.u16(0);
  End.u16(static_cast<uint16_t>(std::min<uint64_t>(Count, fmt::Max16)));
  End.u16(static_cast<uint16_t>(std::min<uint64_t>(Count, fmt::Max16)));
  End.u32(static_cast<uint32_t>(std::min<uint64_t>(CdSize, fmt::Max32)));
  End.u32(static_cast<uint32_t>(std::min<uint64_t>(CdOffset, fmt::Max32)));
  End.u16(0);
  if (Error E = P->write(Cd.V))
    return E;
  if (Error E = P->write(End.V))
    return E;
  P->Done = true;
  return toError(P->File.commit());
}
