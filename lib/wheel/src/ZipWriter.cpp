//===- ZipWriter.cpp - Deterministic zip writer over libzip ---------------===//
//
// libzip lays the zip out (local headers, data, central directory, zip64
// records where needed) and writes it at commit to a temporary file it
// names itself, <file>.XXXXXX, then renames that over <file>. So that a
// signal in the middle (a wheel-sized file) leaves nothing, <file> is in a
// staging directory of its own, an OutputDirectories tree (the process's
// one cleanup on SIGINT, SIGTERM and SIGHUP), which the finished zip
// leaves by a rename over the destination. Each entry gets the fixed
// timestamp, the Unix mode and
// its method; copied entries come from zip_source_zip, which hands libzip
// their compressed bytes, so they are not recompressed.
//
//===----------------------------------------------------------------------===//

#include "kpack/Zip.h"

#include "kpack/AtomicFile.h"
#include "kpack/LLVMError.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <cstring>
#include <zip.h>

using namespace llvm;
using namespace kpack;

namespace {

/// 1980-01-01 00:00:00 in MS-DOS date/time fields: the earliest time a zip
/// holds. libzip turns it into a time_t and back in the same time zone, so
/// the fields written are these whatever the zone.
constexpr zip_uint16_t FixedDosTime = 0;
constexpr zip_uint16_t FixedDosDate = (0 << 9) | (1 << 5) | 1;

std::string libzipText(zip_error_t *Err) {
  return std::string("libzip: ") + zip_error_strerror(Err);
}

} // namespace

struct ZipWriter::Impl {
  std::string Path;
  ZipWriterOptions Options;
  /// The staging tree (Staging) beside Path and libzip's file in it.
  OutputDirectories Dirs;
  std::string Staging, Staged;
  zip_t *Za = nullptr;
  StringSet<> Names;
  bool Done = false;
  uint64_t Size = 0;

  ~Impl() {
    if (Za)
      zip_discard(Za);
    // Dirs removes the staging tree with whatever libzip left in it.
  }

  Error fail(const Twine &Msg) {
    return makeError("zip '" + Path + "': " + Msg);
  }
  Error libzipFail(const Twine &What) {
    return fail(What + " (" + libzipText(zip_get_error(Za)) + ")");
  }

  Error checkName(StringRef Name) {
    if (Done)
      return fail("already committed");
    if (Name.empty() || Name.size() > 0xFFFF)
      return makeError("zip entry name of " + Twine(Name.size()) +
                       " bytes cannot be written");
    if (!Names.insert(Name).second)
      return makeError("duplicate zip entry '" + Name + "' in '" + Path + "'");
    return Error::success();
  }

  /// Adds Src (owned from here on) as Name: Method, or the source's own
  /// compressed form if none is given; the fixed time; the Unix mode.
  Error addSource(StringRef Name, zip_source_t *Src,
                  std::optional<ZipMethod> Method, uint32_t Mode) {
    zip_int64_t Idx =
        zip_file_add(Za, Name.str().c_str(), Src, ZIP_FL_ENC_UTF_8);
    if (Idx < 0) {
      zip_source_free(Src);
      return libzipFail("cannot add entry '" + Name + "'");
    }
    zip_uint64_t I = static_cast<zip_uint64_t>(Idx);
    if (Method &&
        zip_set_file_compression(
            Za, I, *Method == ZipMethod::Stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE,
            *Method == ZipMethod::Stored
                ? 0
                : static_cast<zip_uint32_t>(Options.DeflateLevel)) != 0)
      return libzipFail("cannot set the method of '" + Name + "'");
    if (zip_file_set_dostime(Za, I, FixedDosTime, FixedDosDate, 0) != 0 ||
        zip_file_set_external_attributes(Za, I, 0, ZIP_OPSYS_UNIX,
                                         Mode << 16) != 0)
      return libzipFail("cannot set the attributes of '" + Name + "'");
    return Error::success();
  }
};

ZipWriter::ZipWriter() : P(std::make_unique<Impl>()) {}
ZipWriter::ZipWriter(ZipWriter &&) noexcept = default;
ZipWriter &ZipWriter::operator=(ZipWriter &&) noexcept = default;
ZipWriter::~ZipWriter() = default;

Expected<ZipWriter> ZipWriter::create(StringRef Path,
                                      ZipWriterOptions Options) {
  if (Options.DeflateLevel < 1 || Options.DeflateLevel > 9)
    return makeError("deflate level " + Twine(Options.DeflateLevel) +
                     " out of range 1-9");
  ZipWriter W;
  W.P->Path = Path.str();
  W.P->Options = Options;
  StringRef Parent = sys::path::parent_path(Path);
  StringRef Name = sys::path::filename(Path);
  if (Status S = W.P->Dirs.createTree(
          Parent.empty() ? std::string(".") : Parent.str(),
          "." + Name.str() + ".kpack-", W.P->Staging))
    return makeError("cannot create '" + Path + "': " + S.message());
  W.P->Staged = W.P->Staging + "/" + Name.str();
  int Code = 0;
  W.P->Za = zip_open(W.P->Staged.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &Code);
  if (!W.P->Za) {
    zip_error_t Err;
    zip_error_init_with_code(&Err, Code);
    std::string Lib = libzipText(&Err);
    zip_error_fini(&Err);
    return makeError("cannot create '" + Path + "' (" + Lib + ")");
  }
  return W;
}

uint64_t ZipWriter::size() const { return P->Size; }

Error ZipWriter::add(StringRef Name, ArrayRef<uint8_t> Data, ZipMethod Method,
                     uint32_t Mode) {
  if (Error E = P->checkName(Name))
    return E;
  // libzip reads the data at commit and frees the copy then.
  void *Copy = nullptr;
  if (!Data.empty()) {
    Copy = std::malloc(Data.size());
    if (!Copy)
      return P->fail("out of memory for '" + Name + "'");
    std::memcpy(Copy, Data.data(), Data.size());
  }
  zip_source_t *Src = zip_source_buffer(P->Za, Copy, Data.size(), /*freep=*/1);
  if (!Src) {
    std::free(Copy);
    return P->libzipFail("cannot add entry '" + Name + "'");
  }
  return P->addSource(Name, Src, Method, Mode);
}

Error ZipWriter::addFile(StringRef Name, StringRef Path, ZipMethod Method,
                         uint32_t Mode) {
  if (Error E = P->checkName(Name))
    return E;
  std::error_code EC = sys::fs::access(Path, sys::fs::AccessMode::Exist);
  if (EC)
    return makeError("cannot open '" + Path + "': " + EC.message());
  zip_source_t *Src = zip_source_file(P->Za, Path.str().c_str(), 0, -1);
  if (!Src)
    return P->libzipFail("cannot read '" + Path + "'");
  return P->addSource(Name, Src, Method, Mode);
}

Error ZipWriter::addRaw(StringRef Name, const ZipReader &From,
                        const ZipEntry &E, uint32_t Mode) {
  if (Error Err = P->checkName(Name))
    return Err;
  // The whole entry (start 0, length -1): libzip copies its compressed
  // bytes and takes method, CRC and sizes from From's central directory. A
  // stored entry must be told to stay stored (libzip would deflate it);
  // a deflated one keeps its stream as it is.
  zip_source_t *Src = zip_source_zip(P->Za, From.handle(), E.Index, 0, 0, -1);
  if (!Src)
    return P->libzipFail("cannot copy entry '" + E.Name + "' of '" +
                         From.name() + "'");
  return P->addSource(Name, Src,
                      E.Method == ZipMethod::Stored
                          ? std::optional<ZipMethod>(ZipMethod::Stored)
                          : std::nullopt,
                      Mode);
}

Error ZipWriter::commit() {
  if (P->Done)
    return P->fail("already committed");
  if (P->Names.empty())
    return P->fail("no entries (libzip writes no empty zips)");
  if (zip_close(P->Za) != 0)
    return P->libzipFail("cannot write");
  P->Za = nullptr;
  P->Done = true;
  if (std::error_code EC = sys::fs::rename(P->Staged, P->Path))
    return P->fail("cannot rename '" + P->Staged + "' into place: " +
                   EC.message());
  P->Dirs.removeTree(P->Staging);
  if (std::error_code EC = sys::fs::file_size(P->Path, P->Size))
    return P->fail("cannot stat: " + EC.message());
  return Error::success();
}
