//===- kpack/Zip.h - Zip files as wheels use them ---------------*- C++ -*-===//
//
// The zip container of Python wheels (PEP 427), read and written by Debian's
// libzip (zip64 included). The reader opens with libzip's consistency
// checks (central directory against every local header) and adds what a
// wheel needs on top: names that are relative paths without '.' or '..'
// components, no duplicate names, methods stored (0) and deflate (8) only
// (the two `zipfile` and pip use), no encryption, and entries whose stored
// bytes cannot overlap; contents are checked against their size and CRC-32
// while they stream. The writer writes deterministic zips: entries in the
// caller's order, every timestamp 1980-01-01 00:00:00, "made by" Unix with
// the mode in the external attributes; copied entries keep their
// compressed bytes (no recompression). Malformed input is an error naming
// the zip and the entry, never a crash.
//
// A ZipReader must not be used by two threads at once (libzip's archive
// handle is not thread-safe); a ZipWriter reads the entries it copies from
// their ZipReaders when it commits.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ZIP_H
#define KPACK_ZIP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct zip; // libzip's zip_t

namespace kpack {

enum class ZipMethod : uint16_t { Stored = 0, Deflated = 8 };

/// One entry of a zip's central directory, validated.
struct ZipEntry {
  std::string Name; ///< '/'-separated; directories end in '/'
  uint64_t Index = 0; ///< position in the central directory
  ZipMethod Method = ZipMethod::Stored;
  uint32_t Crc32 = 0;
  uint64_t CompressedSize = 0, UncompressedSize = 0;
  uint8_t HostSystem = 0; ///< high byte of "version made by" (3: Unix)
  uint32_t ExternalAttributes = 0;

  bool isDirectory() const { return !Name.empty() && Name.back() == '/'; }
  /// The Unix st_mode the entry carries (file type and permission bits), or
  /// 0 if it was not made on Unix or carries none.
  uint32_t unixMode() const;
};

/// The Unix mode a file entry is written with when its source carries none
/// (regular file, 0644), and the mode of a file entry made from Mode: the
/// permission bits (0777) kept, setuid, setgid and sticky dropped, the type
/// forced to a regular file.
constexpr uint32_t ZipDefaultFileMode = 0100644;
uint32_t zipFileMode(uint32_t Mode);

/// A zip file, mapped read-only. Everything the reader hands out has been
/// validated when the file was opened; contents are checked while read.
class ZipReader {
public:
  /// Opens and validates Path. Errors name the file and what is wrong.
  static llvm::Expected<ZipReader> open(llvm::StringRef Path);
  /// Validates the zip in Buffer (named by its identifier in errors).
  static llvm::Expected<ZipReader>
  openBuffer(std::unique_ptr<llvm::MemoryBuffer> Buffer);

  ZipReader(ZipReader &&) noexcept;
  ZipReader &operator=(ZipReader &&) noexcept;
  ~ZipReader();

  /// The file's name in messages.
  llvm::StringRef name() const;
  /// The entries in central-directory order.
  llvm::ArrayRef<ZipEntry> entries() const { return Entries; }
  /// The entry named Name, or null.
  const ZipEntry *find(llvm::StringRef Name) const;

  /// The entry's compressed bytes as stored in the file.
  llvm::Expected<std::vector<uint8_t>> rawData(const ZipEntry &E) const;

  /// Streams the entry's uncompressed bytes to Sink in chunks (at most
  /// 1 MiB each); fails if the data does not inflate to exactly the
  /// recorded size or its CRC-32 differs, or if Sink fails.
  llvm::Error
  read(const ZipEntry &E,
       llvm::function_ref<llvm::Error(llvm::ArrayRef<uint8_t>)> Sink) const;
  /// The whole uncompressed entry; an error if it is larger than MaxSize.
  llvm::Expected<std::string> readAll(const ZipEntry &E,
                                      uint64_t MaxSize) const;

private:
  friend class ZipWriter;
  struct Archive;
  ZipReader();
  /// libzip's handle, for ZipWriter::addRaw.
  ::zip *handle() const;
  llvm::Error parse();

  std::unique_ptr<Archive> A;
  std::vector<ZipEntry> Entries;
  llvm::StringMap<size_t> ByName;
};

struct ZipWriterOptions {
  /// zlib level of deflated entries; zipfile's default (Z_DEFAULT_COMPRESSION).
  int DeflateLevel = 6;
};

/// Writes a zip atomically (libzip writes a temporary file, which is
/// renamed into place at commit; nothing is visible before). libzip makes
/// and names its temporary itself, so it does so in a private directory
/// beside Path, an OutputDirectories tree (kpack/AtomicFile.h): removed
/// with everything in it when the writer is dropped uncommitted, and on
/// SIGINT, SIGTERM and SIGHUP. Entries in
/// the order they are added, every timestamp 1980-01-01 00:00:00 (the
/// earliest a zip can hold, what `wheel` writes under SOURCE_DATE_EPOCH=0),
/// "made by" Unix with the mode in the external attributes, zip64 only where
/// a size, offset or the entry count needs it. The same calls give the same
/// bytes.
class ZipWriter {
public:
  static llvm::Expected<ZipWriter> create(llvm::StringRef Path,
                                          ZipWriterOptions Options = {});
  ZipWriter(ZipWriter &&) noexcept;
  ZipWriter &operator=(ZipWriter &&) noexcept;
  ~ZipWriter();

  /// Adds (a copy of) Data as entry Name, compressed with Method, with Unix
  /// mode Mode.
  llvm::Error add(llvm::StringRef Name, llvm::ArrayRef<uint8_t> Data,
                  ZipMethod Method, uint32_t Mode = ZipDefaultFileMode);
  /// Adds the file at Path as entry Name; it is read (streamed) at commit.
  llvm::Error addFile(llvm::StringRef Name, llvm::StringRef Path,
                      ZipMethod Method, uint32_t Mode = ZipDefaultFileMode);
  /// Copies entry E of From under Name: its compressed bytes, method, CRC
  /// and sizes as they are (validated by From when it was opened; callers
  /// that need the contents checked read them first). From must stay open
  /// until commit().
  llvm::Error addRaw(llvm::StringRef Name, const ZipReader &From,
                     const ZipEntry &E, uint32_t Mode);

  /// Writes the zip and renames it into place. A zip needs at least one
  /// entry (libzip writes no empty archives).
  llvm::Error commit();
  /// The size of the committed file (0 before commit()).
  uint64_t size() const;

private:
  ZipWriter();
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace kpack

#endif
