//===- AtomicFile.cpp - All-or-nothing output files -----------------------===//

#include "kpack/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kpack;

namespace {

constexpr size_t BufferCapacity = size_t(1) << 20;

std::string sysError(const std::string &What, const std::string &Path) {
  return What + " '" + Path + "': " + std::strerror(errno);
}

std::string dirName(const std::string &Path) {
  size_t Slash = Path.rfind('/');
  if (Slash == std::string::npos)
    return ".";
  return Slash == 0 ? "/" : Path.substr(0, Slash);
}

/// The process umask without changing it (umask(2) would race with other
/// threads creating files).
mode_t currentUmask() {
  if (FILE *F = std::fopen("/proc/self/status", "r")) {
    char Line[256];
    while (std::fgets(Line, sizeof(Line), F)) {
      unsigned Mask;
      if (std::sscanf(Line, "Umask: %o", &Mask) == 1) {
        std::fclose(F);
        return static_cast<mode_t>(Mask);
      }
    }
    std::fclose(F);
  }
  return 022;
}

Status writeAll(int Fd, const uint8_t *Data, size_t Size, const std::string &P) {
  while (Size) {
    ssize_t N = ::write(Fd, Data, Size);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return Status::error(sysError("cannot write", P));
    }
    Data += N;
    Size -= static_cast<size_t>(N);
  }
  return Status::ok();
}

} // namespace

AtomicFile::~AtomicFile() { discard(); }

Status AtomicFile::open(const std::string &P, const AtomicFileOptions &O) {
  discard();
  Path = P;
  Opts = O;
  Offset = 0;
  Sticky = Status::ok();
  std::string Template = P + ".tmp.XXXXXX";
  std::vector<char> Name(Template.begin(), Template.end());
  Name.push_back('\0');
  Fd = ::mkostemp(Name.data(), O_CLOEXEC);
  if (Fd < 0)
    return Status::error(sysError("cannot create output file", P));
  TempPath = Name.data();
  Buffer.reserve(BufferCapacity);
  return Status::ok();
}

Status AtomicFile::flush() {
  if (Buffer.empty())
    return Status::ok();
  Status S = writeAll(Fd, Buffer.data(), Buffer.size(), TempPath);
  Buffer.clear();
  return S;
}

Status AtomicFile::write(const void *Data, size_t Size) {
  if (Fd < 0)
    return Status::error("write to a closed output file");
  if (Sticky)
    return Sticky;
  const uint8_t *Bytes = static_cast<const uint8_t *>(Data);
  Offset += Size;
  if (Buffer.size() + Size > BufferCapacity) {
    if (Status S = flush())
      return Sticky = S;
    if (Size >= BufferCapacity) {
      if (Status S = writeAll(Fd, Bytes, Size, TempPath))
        return Sticky = S;
      return Status::ok();
    }
  }
  Buffer.insert(Buffer.end(), Bytes, Bytes + Size);
  return Status::ok();
}

Status AtomicFile::writeAt(uint64_t At, const void *Data, size_t Size) {
  if (Fd < 0)
    return Status::error("write to a closed output file");
  if (Sticky)
    return Sticky;
  if (At > Offset || Size > Offset - At)
    return Status::error("internal error: patch beyond the written data");
  if (Status S = flush())
    return Sticky = S;
  const uint8_t *Bytes = static_cast<const uint8_t *>(Data);
  while (Size) {
    ssize_t N = ::pwrite(Fd, Bytes, Size, static_cast<off_t>(At));
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return Sticky = Status::error(sysError("cannot write", TempPath));
    }
    Bytes += N;
    At += static_cast<uint64_t>(N);
    Size -= static_cast<size_t>(N);
  }
  return Status::ok();
}

Status AtomicFile::readAt(uint64_t At, void *Data, size_t Size) {
  if (Fd < 0)
    return Status::error("read from a closed output file");
  if (Sticky)
    return Sticky;
  if (At > Offset || Size > Offset - At)
    return Status::error("internal error: read beyond the written data");
  if (Status S = flush())
    return Sticky = S;
  uint8_t *Bytes = static_cast<uint8_t *>(Data);
  while (Size) {
    ssize_t N = ::pread(Fd, Bytes, Size, static_cast<off_t>(At));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return Status::error(sysError("cannot read back", TempPath));
    if (N == 0)
      return Status::error("'" + TempPath + "' is shorter than written");
    Bytes += N;
    At += static_cast<uint64_t>(N);
    Size -= static_cast<size_t>(N);
  }
  return Status::ok();
}

Status AtomicFile::commit() {
  if (Fd < 0)
    return Status::error("commit of a closed output file");
  if (Sticky || (Sticky = flush())) {
    Status S = Sticky;
    discard();
    return S;
  }
  mode_t Mode = 0666 & ~currentUmask();
  if (!Opts.ModeFrom.empty()) {
    struct stat St;
    if (::stat(Opts.ModeFrom.c_str(), &St) != 0) {
      Status S = Status::error(sysError("cannot stat", Opts.ModeFrom));
      discard();
      return S;
    }
    Mode = St.st_mode & 07777;
  }
  if (::fchmod(Fd, Mode) != 0 || (Opts.Sync && ::fsync(Fd) != 0)) {
    Status S = Status::error(sysError("cannot finish", TempPath));
    discard();
    return S;
  }
  if (::close(Fd) != 0) {
    Fd = -1;
    Status S = Status::error(sysError("cannot close", TempPath));
    discard();
    return S;
  }
  Fd = -1;
  if (::rename(TempPath.c_str(), Path.c_str()) != 0) {
    Status S = Status::error(sysError("cannot rename output to", Path));
    discard();
    return S;
  }
  TempPath.clear();
  if (Opts.Sync) {
    int Dir = ::open(dirName(Path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (Dir >= 0) {
      ::fsync(Dir);
      ::close(Dir);
    }
  }
  return Status::ok();
}

void AtomicFile::discard() {
  if (Fd >= 0) {
    ::close(Fd);
    Fd = -1;
  }
  if (!TempPath.empty()) {
    ::unlink(TempPath.c_str());
    TempPath.clear();
  }
  Buffer.clear();
}

Status kpack::writeFileAtomically(const std::string &Path, const void *Data,
                                  size_t Size, const AtomicFileOptions &Opts) {
  AtomicFile F;
  if (Status S = F.open(Path, Opts))
    return S;
  if (Status S = F.write(Data, Size))
    return S;
  return F.commit();
}
