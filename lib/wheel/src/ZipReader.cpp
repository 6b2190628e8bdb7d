//===- ZipReader.cpp - Validating zip reader over libzip ------------------===//
//
// libzip parses the zip (end records, zip64, central directory) and, with
// ZIP_CHECKCONS, checks every local header against its central directory
// entry; reading checks the size and CRC-32. What wheels need beyond that
// (names, methods, no encryption, no duplicates, no overlapping entries) is
// checked here when the file is opened.
//
//===----------------------------------------------------------------------===//

#include "kpack/Zip.h"

#include "kpack/LLVMError.h"
#include "kpack/Quote.h"

#include "llvm/ADT/StringExtras.h"

#include <cstring>
#include <zip.h>

using namespace llvm;
using namespace kpack;

namespace {

constexpr size_t ChunkSize = size_t(1) << 20;
/// The fixed parts of a local file header, a central directory header and
/// the end record (PKWARE APPNOTE 4.3.7, 4.3.12, 4.3.16).
constexpr uint64_t LocalHeaderSize = 30, CentralHeaderSize = 46, EndSize = 22;

/// libzip's text for an error, copied before the error is released.
std::string libzipText(zip_error_t *Err) {
  return std::string("libzip: ") + zip_error_strerror(Err);
}

/// Why Name cannot be an entry of a wheel, or "" if it can: relative,
/// '/'-separated, no empty, "." or ".." component (a trailing '/' marks a
/// directory), no backslash.
std::string badNameReason(StringRef Name) {
  if (Name.empty())
    return "empty name";
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

/// The mapped file and libzip's handle on it (which reads from the mapping).
struct ZipReader::Archive {
  std::unique_ptr<MemoryBuffer> Buffer;
  zip_t *Za = nullptr;
  ~Archive() {
    if (Za)
      zip_discard(Za);
  }
};

uint32_t ZipEntry::unixMode() const {
  if (HostSystem != ZIP_OPSYS_UNIX)
    return 0;
  return ExternalAttributes >> 16;
}

uint32_t kpack::zipFileMode(uint32_t Mode) {
  // Permission bits only: setuid, setgid and sticky from an untrusted zip
  // are never kept (pip and installer drop them too).
  uint32_t Permissions = Mode & 0777;
  return Permissions ? (0100000 | Permissions) : ZipDefaultFileMode;
}

ZipReader::ZipReader() : A(std::make_unique<Archive>()) {}
ZipReader::ZipReader(ZipReader &&) noexcept = default;
ZipReader &ZipReader::operator=(ZipReader &&) noexcept = default;
ZipReader::~ZipReader() = default;

zip_t *ZipReader::handle() const { return A->Za; }

StringRef ZipReader::name() const { return A->Buffer->getBufferIdentifier(); }

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
  R.A->Buffer = std::move(Buffer);
  if (Error E = R.parse())
    return E;
  return R;
}

const ZipEntry *ZipReader::find(StringRef Name) const {
  auto It = ByName.find(Name);
  return It == ByName.end() ? nullptr : &Entries[It->second];
}

Error ZipReader::parse() {
  const MemoryBuffer &Buf = *A->Buffer;
  const uint64_t Size = Buf.getBufferSize();
  auto Fail = [&](const Twine &Msg) {
    return makeError("'" + name() + "': " + Msg);
  };
  // libzip takes an empty file for an empty archive.
  if (Size == 0)
    return Fail("not a zip file (empty)");

  zip_error_t Err;
  zip_error_init(&Err);
  zip_source_t *Src =
      zip_source_buffer_create(Buf.getBufferStart(), Size, /*freep=*/0, &Err);
  if (Src)
    A->Za = zip_open_from_source(Src, ZIP_RDONLY | ZIP_CHECKCONS, &Err);
  if (!A->Za) {
    int Code = zip_error_code_zip(&Err);
    std::string Lib = libzipText(&Err);
    zip_error_fini(&Err);
    if (Src)
      zip_source_free(Src);
    switch (Code) {
    case ZIP_ER_NOZIP:
      return Fail("not a zip file (" + Lib + ")");
    case ZIP_ER_INCONS:
      return Fail("inconsistent zip: its end record, central directory and "
                  "local headers disagree (" + Lib + ")");
    case ZIP_ER_EXISTS:
      return Fail("duplicate entry names (" + Lib + ")");
    case ZIP_ER_MULTIDISK:
      return Fail("zips spanning several disks are not supported");
    default:
      return Fail("cannot open (" + Lib + ")");
    }
  }
  zip_error_fini(&Err);

  zip_int64_t Count = zip_get_num_entries(A->Za, 0);
  if (Count < 0)
    return Fail("cannot count the entries (" +
                libzipText(zip_get_error(A->Za)) + ")");
  Entries.reserve(static_cast<size_t>(Count));
  // What the zip occupies at least: the end record, and for each entry its
  // local and central headers (fixed parts and name) and its stored bytes.
  // More than the file holds means entries share bytes (overlapping
  // entries: zip bombs and parser confusion), which libzip does not check.
  uint64_t Occupied = EndSize;
  for (uint64_t I = 0; I < static_cast<uint64_t>(Count); ++I) {
    zip_stat_t St;
    if (zip_stat_index(A->Za, I, 0, &St) != 0)
      return Fail("central directory entry " + Twine(I) + ": " +
                  libzipText(zip_get_error(A->Za)));
    ZipEntry E;
    E.Index = I;
    E.Name = St.name;
    auto NamedFail = [&](const Twine &Msg) {
      return Fail("entry " + quoteInput(E.Name) + ": " + Msg);
    };
    std::string Bad = badNameReason(E.Name);
    if (!Bad.empty())
      return NamedFail("invalid name (" + Bad + ")");
    if ((St.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
        St.encryption_method != ZIP_EM_NONE)
      return NamedFail("encrypted entries are not supported");
    if (St.comp_method != ZIP_CM_STORE && St.comp_method != ZIP_CM_DEFLATE)
      return NamedFail("compression method " + Twine(St.comp_method) +
                       " is not supported (only stored and deflate)");
    E.Method = static_cast<ZipMethod>(St.comp_method);
    E.Crc32 = St.crc;
    E.CompressedSize = St.comp_size;
    E.UncompressedSize = St.size;
    zip_uint8_t OpSys = 0;
    zip_uint32_t Attributes = 0;
    if (zip_file_get_external_attributes(A->Za, I, 0, &OpSys, &Attributes) !=
        0)
      return NamedFail(libzipText(zip_get_error(A->Za)));
    E.HostSystem = OpSys;
    E.ExternalAttributes = Attributes;
    if (E.Method == ZipMethod::Stored &&
        E.CompressedSize != E.UncompressedSize)
      return NamedFail("stored entry with compressed size " +
                       Twine(E.CompressedSize) + " != size " +
                       Twine(E.UncompressedSize));
    if (E.isDirectory() && E.UncompressedSize != 0)
      return NamedFail("directory entry with contents");
    const char *Raw = zip_get_name(A->Za, I, ZIP_FL_ENC_RAW);
    uint64_t Needs =
        LocalHeaderSize + CentralHeaderSize + 2 * (Raw ? strlen(Raw) : 0);
    if (E.CompressedSize > Size || Occupied > Size ||
        Needs + E.CompressedSize > Size - Occupied)
      return NamedFail("data (" + Twine(E.CompressedSize) +
                       " bytes) overlaps other entries: the entries need more "
                       "than the file's " + Twine(Size) + " bytes");
    Occupied += Needs + E.CompressedSize;
    if (!ByName.try_emplace(E.Name, Entries.size()).second)
      return NamedFail("duplicate entry");
    Entries.push_back(std::move(E));
  }
  return Error::success();
}

namespace {

/// An open entry of a zip, closed when it goes out of scope.
struct OpenEntry {
  zip_file_t *F = nullptr;
  ~OpenEntry() {
    if (F)
      zip_fclose(F);
  }
};

} // namespace

Expected<std::vector<uint8_t>> ZipReader::rawData(const ZipEntry &E) const {
  auto Fail = [&](const Twine &Msg) {
    return makeError("'" + name() + "': entry " + quoteInput(E.Name) + ": " +
                     Msg);
  };
  OpenEntry In;
  In.F = zip_fopen_index(A->Za, E.Index, ZIP_FL_COMPRESSED);
  if (!In.F)
    return Fail(libzipText(zip_get_error(A->Za)));
  std::vector<uint8_t> Out(E.CompressedSize);
  uint64_t Got = 0;
  while (Got < Out.size()) {
    zip_int64_t N = zip_fread(In.F, Out.data() + Got, Out.size() - Got);
    if (N < 0)
      return Fail(libzipText(zip_file_get_error(In.F)));
    if (N == 0)
      return Fail("compressed data ends after " + Twine(Got) + " bytes");
    Got += static_cast<uint64_t>(N);
  }
  return Out;
}

Error ZipReader::read(const ZipEntry &E,
                      function_ref<Error(ArrayRef<uint8_t>)> Sink) const {
  auto Fail = [&](const Twine &Msg) {
    return makeError("'" + name() + "': entry " + quoteInput(E.Name) + ": " +
                     Msg);
  };
  OpenEntry In;
  In.F = zip_fopen_index(A->Za, E.Index, 0);
  if (!In.F)
    return Fail(libzipText(zip_get_error(A->Za)));
  std::vector<uint8_t> Buf(ChunkSize);
  uint64_t Total = 0;
  while (true) {
    zip_int64_t N = zip_fread(In.F, Buf.data(), Buf.size());
    if (N < 0) {
      zip_error_t *Err = zip_file_get_error(In.F);
      switch (zip_error_code_zip(Err)) {
      case ZIP_ER_CRC:
        return Fail("CRC-32 mismatch (contents corrupt): recorded " +
                    Twine::utohexstr(E.Crc32) + " (" + libzipText(Err) + ")");
      case ZIP_ER_INCONS:
        return Fail("inflates to " + Twine(Total) +
                    " bytes, not its recorded " + Twine(E.UncompressedSize) +
                    " (" + libzipText(Err) + ")");
      case ZIP_ER_ZLIB:
      case ZIP_ER_COMPRESSED_DATA:
        return Fail("corrupt deflate data (" + libzipText(Err) + ")");
      case ZIP_ER_EOF:
        return Fail("truncated deflate data (" + libzipText(Err) + ")");
      default:
        return Fail(libzipText(Err));
      }
    }
    if (N == 0)
      break;
    if (static_cast<uint64_t>(N) > E.UncompressedSize - Total)
      return Fail("inflates to more than its recorded size " +
                  Twine(E.UncompressedSize));
    Total += static_cast<uint64_t>(N);
    if (Error Err = Sink(ArrayRef<uint8_t>(Buf.data(), static_cast<size_t>(N))))
      return Err;
  }
  if (Total != E.UncompressedSize)
    return Fail("inflates to " + Twine(Total) + " bytes, not its recorded " +
                Twine(E.UncompressedSize));
  return Error::success();
}

Expected<std::string> ZipReader::readAll(const ZipEntry &E,
                                         uint64_t MaxSize) const {
  if (E.UncompressedSize > MaxSize)
    return makeError("'" + name() + "': entry " + quoteInput(E.Name) + ": " +
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
