//===- kpack/AtomicFile.h - All-or-nothing output files ---------*- C++ -*-===//
//
// Every tool writes its outputs through AtomicFile: bytes go to a temporary
// file beside the destination, which replaces the destination only on
// commit(). A reader never sees a half-written file, and a failed or
// abandoned write leaves the previous file (if any) untouched.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ATOMICFILE_H
#define KPACK_ATOMICFILE_H

#include "kpack/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kpack {

struct AtomicFileOptions {
  /// fsync the data (and the directory after the rename) on commit.
  bool Sync = false;
  /// If non-empty, the output gets this file's permission bits (e.g. the
  /// input host binary when rewriting it); otherwise 0666 & ~umask.
  std::string ModeFrom;
};

class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  /// Removes the temporary file if commit() did not happen.
  ~AtomicFile();

  /// Creates the temporary file for Path (in Path's directory).
  Status open(const std::string &Path, const AtomicFileOptions &Opts = {});

  /// Appends bytes (buffered).
  Status write(const void *Data, size_t Size);
  Status write(const std::vector<uint8_t> &Bytes) {
    return write(Bytes.data(), Bytes.size());
  }
  /// Overwrites already written bytes at Offset (e.g. a header patched once
  /// the layout is known). Offset + Size must not exceed offset().
  Status writeAt(uint64_t Offset, const void *Data, size_t Size);
  /// Reads back already written bytes (e.g. to compare new data with data
  /// written before). Offset + Size must not exceed offset().
  Status readAt(uint64_t Offset, void *Data, size_t Size);
  /// Number of bytes appended so far.
  uint64_t offset() const { return Offset; }

  /// Flushes, applies the mode, renames the temporary file over the
  /// destination. The object is closed afterwards.
  Status commit();
  /// Closes and removes the temporary file.
  void discard();

  const std::string &path() const { return Path; }
  const std::string &tempPath() const { return TempPath; }

private:
  Status flush();

  std::string Path, TempPath;
  AtomicFileOptions Opts;
  int Fd = -1;
  uint64_t Offset = 0;
  std::vector<uint8_t> Buffer;
  Status Sticky; // first write error; reported again by commit()
};

/// Writes Bytes to Path atomically.
Status writeFileAtomically(const std::string &Path, const void *Data,
                           size_t Size, const AtomicFileOptions &Opts = {});

} // namespace kpack

#endif
