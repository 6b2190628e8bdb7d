//===- ByteSource.h - Random-access archive bytes ---------------*- C++ -*-===//
//
// The reader never slurps an archive: it asks for byte ranges. A file source
// serves them through kpack/Platform.h's ReadOnlyFile (pread on Linux, a
// read-only mapping on Windows; thread-safe, no shared file position).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_RUNTIME_BYTESOURCE_H
#define KPACK_RUNTIME_BYTESOURCE_H

#include "kpack/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kpack {

class ByteSource {
public:
  virtual ~ByteSource() = default;
  uint64_t size() const { return Size; }
  /// Reads exactly Length bytes at Offset; the range must lie in the source.
  virtual Status readAt(uint64_t Offset, void *Dest, size_t Length) const = 0;

  static Status openFile(const std::string &Path,
                           std::unique_ptr<ByteSource> &Out);
  static std::unique_ptr<ByteSource> fromBytes(const void *Data, size_t Size);

protected:
  uint64_t Size = 0;
};

/// True when [Offset, Offset + Length) lies within [0, Limit), overflow-safe.
inline bool rangeWithin(uint64_t Offset, uint64_t Length, uint64_t Limit) {
  return Offset <= Limit && Length <= Limit - Offset;
}

} // namespace kpack

#endif
