//===- kpack/Zip.h - Zip files as wheels use them ---------------*- C++ -*-===//
//
// The zip container of Python wheels (PEP 427): a reader that validates the
// whole central directory before anything is read (every offset, size and
// name checked, zip64 where the 32-bit fields overflow, local headers
// consistent with the central directory, no overlapping entries; contents
// checked against their CRC-32 and size while they stream), and a writer of
// deterministic zips (fixed timestamps, entries in the caller's order,
// external attributes carrying the Unix mode, as `wheel` writes them).
// Methods: stored (0) and deflate (8, zlib), the two that `zipfile` and pip
// use. Malformed input is an error naming the zip and the entry, never a
// crash.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ZIP_H
#define KPACK_ZIP_H

#include "kpack/AtomicFile.h"

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

namespace kpack {

enum class ZipMethod : uint16_t { Stored = 0, Deflated = 8 };

/// "stored" or "deflate".
llvm::StringRef zipMethodName(ZipMethod M);

/// One entry of a zip's central directory, validated.
struct ZipEntry {
  std::string Name; ///< '/'-separated; directories end in '/'
  ZipMethod Method = ZipMethod::Stored;
  uint32_t Crc32 = 0;
  uint64_t CompressedSize = 0, UncompressedSize = 0;
  uint64_t HeaderOffset = 0; ///< of the local file header
  uint64_t DataOffset = 0;   ///< of the (compressed) data
  uint16_t VersionMadeBy = 0;
  uint32_t ExternalAttributes = 0;

  bool isDirectory() const { return !Name.empty() && Name.back() == '/'; }
  /// The Unix st_mode the entry carries (file type and permission bits), or
  /// 0 if it was not made on Unix or carries none.
  uint32_t unixMode() const;
};

/// The Unix mode a file entry is written with when its source carries none
/// (regular file, 0644), and the mode of a file entry made from Mode: the
/// permission bits kept, the type forced to a regular file.
constexpr uint32_t ZipDefaultFileMode = 0100644;
uint32_t zipFileMode(uint32_t Mode);

/// CRC-32 (the zip/zlib polynomial) of Data, continuing from Crc.
uint32_t zipCrc32(llvm::ArrayRef<uint8_t> Data, uint32_t Crc = 0);

/// A zip file, mapped read-only. Everything the reader hands out has been
/// validated when the file was opened; contents are checked while read.
class ZipReader {
public:
  /// Opens and validates Path. Errors name the file and what is wrong.
  static llvm::Expected<ZipReader> open(llvm::StringRef Path);
  /// Validates the zip in Buffer (named by its identifier in errors).
  static llvm::Expected<ZipReader>
  openBuffer(std::unique_ptr<llvm::MemoryBuffer> Buffer);

  ZipReader(ZipReader &&) = default;
  ZipReader &operator=(ZipReader &&) = default;

  /// The file's name in messages.
  llvm::StringRef name() const { return Buffer->getBufferIdentifier(); }
  /// The entries in central-directory order.
  llvm::ArrayRef<ZipEntry> entries() const { return Entries; }
  /// The entry named Name, or null.
  const ZipEntry *find(llvm::StringRef Name) const;

  /// The entry's compressed bytes as stored in the file.
  llvm::ArrayRef<uint8_t> rawData(const ZipEntry &E) const;

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
  ZipReader() = default;
  llvm::Error parse();

  std::unique_ptr<llvm::MemoryBuffer> Buffer;
  std::vector<ZipEntry> Entries;
  llvm::StringMap<size_t> ByName;
};

struct ZipWriterOptions {
  /// zlib level of deflated entries; zipfile's default (Z_DEFAULT_COMPRESSION).
  int DeflateLevel = 6;
  /// Zip64 extra fields and end records even where 32-bit fields suffice
  /// (tests of the zip64 paths without 4 GiB inputs).
  bool ForceZip64 = false;
};

/// Writes a zip atomically (kpack::AtomicFile): entries in the order they
/// are added, every timestamp 1980-01-01 00:00:00 (the earliest a zip can
/// hold, what `wheel` writes under SOURCE_DATE_EPOCH=0), "made by" Unix with
/// the mode in the external attributes, zip64 only where a size, offset or
/// the entry count needs it. The same calls give the same bytes.
class ZipWriter {
public:
  static llvm::Expected<ZipWriter> create(llvm::StringRef Path,
                                          ZipWriterOptions Options = {});
  ZipWriter(ZipWriter &&);
  ZipWriter &operator=(ZipWriter &&);
  ~ZipWriter();

  /// Adds Data as entry Name, compressed with Method, with Unix mode Mode.
  llvm::Error add(llvm::StringRef Name, llvm::ArrayRef<uint8_t> Data,
                  ZipMethod Method, uint32_t Mode = ZipDefaultFileMode);
  /// Adds the file at Path as entry Name, streamed.
  llvm::Error addFile(llvm::StringRef Name, llvm::StringRef Path,
                      ZipMethod Method, uint32_t Mode = ZipDefaultFileMode);
  /// Copies entry E of From under Name: its compressed bytes, method, CRC
  /// and sizes as they are (validated by From when it was opened; callers
  /// that need the contents checked read them first).
  llvm::Error addRaw(llvm::StringRef Name, const ZipReader &From,
                     const ZipEntry &E, uint32_t Mode);

  /// Writes the central directory and renames the file into place.
  llvm::Error commit();
  /// The number of bytes written so far.
  uint64_t size() const;

private:
  ZipWriter();
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace kpack

#endif
