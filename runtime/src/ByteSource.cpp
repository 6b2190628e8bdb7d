//===- ByteSource.cpp - Random-access archive bytes -----------------------===//

#include "ByteSource.h"

#include "kpack/Platform.h"

#include <cstring>

namespace kpack {
namespace {

class FileSource final : public ByteSource {
public:
  explicit FileSource(std::unique_ptr<platform::ReadOnlyFile> File)
      : File(std::move(File)) {
    Size = this->File->size();
  }

  Status readAt(uint64_t Offset, void *Dest, size_t Length) const override {
    if (!rangeWithin(Offset, Length, Size))
      return Status(KPACK_ERROR_INVALID_FORMAT, "read past end of file");
    return File->readAt(Offset, Dest, Length);
  }

private:
  std::unique_ptr<platform::ReadOnlyFile> File;
};

class MemorySource final : public ByteSource {
public:
  MemorySource(const void *Data, size_t Length)
      : Bytes(static_cast<const char *>(Data),
              static_cast<const char *>(Data) + Length) {
    Size = Length;
  }

  Status readAt(uint64_t Offset, void *Dest, size_t Length) const override {
    if (!rangeWithin(Offset, Length, Size))
      return Status(KPACK_ERROR_INVALID_FORMAT, "read past end of data");
    if (Length)
      std::memcpy(Dest, Bytes.data() + Offset, Length);
    return Status::ok();
  }

private:
  std::vector<char> Bytes;
};

} // namespace

Status ByteSource::openFile(const std::string &Path,
                            std::unique_ptr<ByteSource> &Out) {
  std::unique_ptr<platform::ReadOnlyFile> File;
  if (Status E = platform::ReadOnlyFile::open(Path, File))
    return E;
  Out = std::make_unique<FileSource>(std::move(File));
  return Status::ok();
}

std::unique_ptr<ByteSource> ByteSource::fromBytes(const void *Data,
                                                  size_t Size) {
  return std::make_unique<MemorySource>(Data, Size);
}

} // namespace kpack
