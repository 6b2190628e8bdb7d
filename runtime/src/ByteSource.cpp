//===- ByteSource.cpp - Random-access archive bytes -----------------------===//

#include "ByteSource.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kpack {
namespace {

class FileSource final : public ByteSource {
public:
  FileSource(int Fd, uint64_t FileSize) : Fd(Fd) { Size = FileSize; }
  ~FileSource() override { ::close(Fd); }

  Status readAt(uint64_t Offset, void *Dest, size_t Length) const override {
    if (!rangeWithin(Offset, Length, Size))
      return Status(KPACK_ERROR_INVALID_FORMAT, "read past end of file");
    auto *Out = static_cast<char *>(Dest);
    while (Length > 0) {
      ssize_t N = ::pread(Fd, Out, Length, static_cast<off_t>(Offset));
      if (N < 0 && errno == EINTR)
        continue;
      if (N < 0)
        return Status(KPACK_ERROR_IO_ERROR,
                        std::string("read failed: ") + std::strerror(errno));
      if (N == 0) // the file shrank after it was opened
        return Status(KPACK_ERROR_IO_ERROR, "unexpected end of file");
      Out += N;
      Offset += static_cast<uint64_t>(N);
      Length -= static_cast<size_t>(N);
    }
    return Status::ok();
  }

private:
  int Fd;
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
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0) {
    int Err = errno;
    kpack_error_t Code = (Err == ENOENT || Err == ENOTDIR)
                             ? KPACK_ERROR_FILE_NOT_FOUND
                             : KPACK_ERROR_IO_ERROR;
    return Status(Code, "cannot open '" + Path + "': " + std::strerror(Err));
  }
  struct stat St;
  if (::fstat(Fd, &St) != 0 || !S_ISREG(St.st_mode)) {
    ::close(Fd);
    return Status(KPACK_ERROR_IO_ERROR,
                    "'" + Path + "' is not a regular file");
  }
  Out = std::make_unique<FileSource>(Fd, static_cast<uint64_t>(St.st_size));
  return Status::ok();
}

std::unique_ptr<ByteSource> ByteSource::fromBytes(const void *Data,
                                                  size_t Size) {
  return std::make_unique<MemorySource>(Data, Size);
}

} // namespace kpack
