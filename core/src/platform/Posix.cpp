//===- Posix.cpp - kpack/Platform.h on Linux ------------------------------===//
//
// Readable memory: first the loaded ELF objects' segments (dl_iterate_phdr:
// no system call, no file parsing), since HIPK metadata lives in the binary
// that registers it; then, for anything else, the kernel's own list of
// mappings. Neither touches the memory in question.
//
// Binary paths: dladdr only knows symbols and dl_iterate_phdr only loaded
// ELF objects' segments by name; /proc/self/maps names the file behind any
// mapped byte, which is what a HIPK wrapper's metadata pointer needs.
//
// Archives are read with pread (no shared file position, thread-safe); a
// path that is not a regular file (a FIFO, a device) is refused without
// blocking or reading.
//
//===----------------------------------------------------------------------===//

#include "kpack/Platform.h"

#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kpack::platform {

const char PathListSeparator = ':';

std::optional<std::string> getEnv(const char *Name) {
  const char *V = std::getenv(Name);
  if (!V)
    return std::nullopt;
  return std::string(V);
}

bool isAbsolutePath(std::string_view Path) {
  return !Path.empty() && Path[0] == '/';
}

bool isDirectorySeparator(char C) { return C == '/'; }

std::string lastErrorMessage() { return std::strerror(errno); }

namespace {

struct SegmentQuery {
  uintptr_t Address;
  bool Found = false;
  bool Readable = false;
  uintptr_t End = 0;
};

int findSegment(struct dl_phdr_info *Info, size_t, void *Data) {
  auto *Q = static_cast<SegmentQuery *>(Data);
  for (ElfW(Half) I = 0; I < Info->dlpi_phnum; ++I) {
    const ElfW(Phdr) &P = Info->dlpi_phdr[I];
    if (P.p_type != PT_LOAD || P.p_memsz == 0)
      continue;
    uintptr_t Start = Info->dlpi_addr + P.p_vaddr;
    uintptr_t End = Start + P.p_memsz;
    if (Q->Address < Start || Q->Address >= End)
      continue;
    Q->Found = true;
    Q->Readable = (P.p_flags & PF_R) != 0;
    Q->End = End;
    return 1;
  }
  return 0;
}

/// The end of the run of readable mappings that starts at or before Address
/// and contains it, per /proc/self/maps; 0 if Address is not readable.
uintptr_t readableEndFromMaps(uintptr_t Address) {
  std::FILE *Maps = std::fopen("/proc/self/maps", "re");
  if (!Maps)
    return 0;
  char *Line = nullptr;
  size_t Capacity = 0;
  uintptr_t RunEnd = 0; // end of the readable run containing Address
  while (getline(&Line, &Capacity, Maps) > 0) {
    uintptr_t Start, End;
    char Perms[8] = {0};
    if (std::sscanf(Line, "%" SCNxPTR "-%" SCNxPTR " %7s", &Start, &End,
                    Perms) != 3)
      continue;
    bool Readable = Perms[0] == 'r';
    if (RunEnd) {
      // Extend the run over adjacent readable mappings.
      if (Start == RunEnd && Readable) {
        RunEnd = End;
        continue;
      }
      break;
    }
    if (Address >= Start && Address < End) {
      if (!Readable)
        break;
      RunEnd = End;
    } else if (Start > Address) {
      break; // the file is sorted: Address is in no mapping
    }
  }
  std::free(Line);
  std::fclose(Maps);
  return RunEnd;
}

/// fork() while another thread is inside dl_iterate_phdr leaves glibc's
/// loader lock (dl_load_write_lock) held in the child, whose own next
/// dl_iterate_phdr then waits for ever (seen with Debian 12's glibc 2.36:
/// shim/fork-during-registration.test, a child of a process registering on
/// another thread). Our own calls are therefore made under PhdrLock, which
/// fork takes first: no thread of ours is inside dl_iterate_phdr when the
/// process forks. It is a leaf lock (nothing else is taken under it).
pthread_mutex_t PhdrLock = PTHREAD_MUTEX_INITIALIZER;

/// The fork handlers are registered when the program or library is loaded,
/// not by the first query: registering them under pthread_once let a fork
/// on another thread land while the once was running, and a child inherits
/// that state. glibc's pthread_once runs such a once again in the child,
/// but ThreadSanitizer's (its interceptor, a plain guard word) does not, so
/// the child's first query waited for ever (CoreTests'
/// ReadableMemoryThread.ForkWhileAnotherThreadMakesTheFirstQuery). Prepare
/// handlers run in the reverse order of registration, so fork now takes
/// PhdrLock after the locks of handlers registered at run time (the
/// runtime's LoaderCache): the order a caller querying while holding one
/// of those locks would take them in.
__attribute__((constructor)) void registerPhdrForkHandlers() {
  registerForkHandlers([] { pthread_mutex_lock(&PhdrLock); },
                       [] { pthread_mutex_unlock(&PhdrLock); },
                       [] { pthread_mutex_unlock(&PhdrLock); });
}

void findLoadedSegment(SegmentQuery &Q) {
  pthread_mutex_lock(&PhdrLock);
  dl_iterate_phdr(findSegment, &Q);
  pthread_mutex_unlock(&PhdrLock);
}

} // namespace

size_t readableBytesAt(const void *Address, size_t Max) {
  const uintptr_t Addr = reinterpret_cast<uintptr_t>(Address);
  if (Addr == 0 || Max == 0)
    return 0;
  SegmentQuery Q;
  Q.Address = Addr;
  findLoadedSegment(Q);
  uintptr_t End;
  if (Q.Found && Q.Readable) {
    End = Q.End;
  } else {
    // Not in a readable segment of a loaded object: the heap, an anonymous
    // or hand-made mapping, or memory that is not mapped at all.
    End = readableEndFromMaps(Addr);
    if (End <= Addr)
      return 0;
  }
  return static_cast<size_t>(std::min<uintptr_t>(End - Addr, Max));
}

Status binaryPathOf(const void *Address, std::string &Path, uint64_t &Offset) {
  std::FILE *Maps = std::fopen("/proc/self/maps", "re");
  if (!Maps)
    return Status(KPACK_ERROR_PATH_DISCOVERY_FAILED,
                  "cannot read /proc/self/maps");
  const uintptr_t Addr = reinterpret_cast<uintptr_t>(Address);
  char *Line = nullptr;
  size_t Capacity = 0;
  Status Result(KPACK_ERROR_PATH_DISCOVERY_FAILED,
                "address is not in a file-backed mapping");
  while (getline(&Line, &Capacity, Maps) > 0) {
    uintptr_t Start, End;
    uint64_t FileOffset;
    int PathStart = 0;
    // start-end perms offset dev inode path
    if (std::sscanf(Line,
                    "%" SCNxPTR "-%" SCNxPTR " %*s %" SCNx64 " %*s %*s %n",
                    &Start, &End, &FileOffset, &PathStart) != 3 ||
        PathStart == 0)
      continue;
    if (Addr < Start || Addr >= End)
      continue;
    std::string File(Line + PathStart);
    while (!File.empty() && (File.back() == '\n' || File.back() == ' '))
      File.pop_back();
    if (File.empty() || File[0] != '/')
      break; // anonymous, [heap], [stack], ...
    Path = std::move(File);
    Offset = FileOffset + (Addr - Start);
    Result = Status::ok();
    break;
  }
  std::free(Line);
  std::fclose(Maps);
  return Result;
}

Status canonicalPath(const std::string &Path, std::string &Canonical) {
  char Resolved[PATH_MAX];
  if (!::realpath(Path.c_str(), Resolved))
    return Status(KPACK_ERROR_FILE_NOT_FOUND,
                  std::string("cannot resolve: ") + std::strerror(errno));
  Canonical = Resolved;
  return Status::ok();
}

bool isDirectory(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

Status listDirectory(const std::string &Dir, std::vector<std::string> &Names) {
  DIR *D = ::opendir(Dir.c_str());
  if (!D)
    return Status(errno == ENOENT || errno == ENOTDIR
                      ? KPACK_ERROR_FILE_NOT_FOUND
                      : KPACK_ERROR_IO_ERROR,
                  "cannot list '" + Dir + "': " + std::strerror(errno));
  while (const struct dirent *E = ::readdir(D)) {
    std::string Name = E->d_name;
    if (Name != "." && Name != "..")
      Names.push_back(std::move(Name));
  }
  ::closedir(D);
  return Status::ok();
}

FileIdentity FileIdentity::of(const std::string &Path) {
  FileIdentity S;
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    return S;
  S.Exists = true;
  S.Device = static_cast<uint64_t>(St.st_dev);
  S.Inode = static_cast<uint64_t>(St.st_ino);
  S.Size = static_cast<uint64_t>(St.st_size);
  S.ModifiedSec = St.st_mtim.tv_sec;
  S.ModifiedNsec = St.st_mtim.tv_nsec;
  S.ChangedSec = St.st_ctim.tv_sec;
  S.ChangedNsec = St.st_ctim.tv_nsec;
  return S;
}

namespace {

class PreadFile final : public ReadOnlyFile {
public:
  PreadFile(int Fd, uint64_t FileSize) : Fd(Fd) { Size = FileSize; }
  ~PreadFile() override { ::close(Fd); }

  Status readAt(uint64_t Offset, void *Dest, size_t Length) const override {
    if (Offset > Size || Length > Size - Offset)
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

} // namespace

Status ReadOnlyFile::open(const std::string &Path,
                          std::unique_ptr<ReadOnlyFile> &Out) {
  // Only a regular file is an archive. Anything else at a search path is
  // refused without being read, and without waiting: open(2) of a FIFO for
  // reading waits for a writer (and of a terminal line, for its carrier),
  // for ever, before fstat could tell. So the type is looked at first (a
  // device is not even opened), and the open does not block (O_NONBLOCK),
  // for a FIFO put there in between; fstat then checks what was opened.
  struct stat St;
  if (::stat(Path.c_str(), &St) == 0 && !S_ISREG(St.st_mode))
    return Status(KPACK_ERROR_IO_ERROR, "'" + Path + "' is not a regular file");
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (Fd < 0) {
    int Err = errno;
    kpack_error_t Code = (Err == ENOENT || Err == ENOTDIR)
                             ? KPACK_ERROR_FILE_NOT_FOUND
                             : KPACK_ERROR_IO_ERROR;
    return Status(Code, "cannot open '" + Path + "': " + std::strerror(Err));
  }
  if (::fstat(Fd, &St) != 0 || !S_ISREG(St.st_mode)) {
    ::close(Fd);
    return Status(KPACK_ERROR_IO_ERROR, "'" + Path + "' is not a regular file");
  }
  // A regular file's reads ignore O_NONBLOCK on most file systems, not on
  // all (a mandatory lock, some network ones): cleared, so that a read
  // never fails with EAGAIN.
  const int Flags = ::fcntl(Fd, F_GETFL);
  if (Flags < 0 || ::fcntl(Fd, F_SETFL, Flags & ~O_NONBLOCK) != 0) {
    int Err = errno;
    ::close(Fd);
    return Status(KPACK_ERROR_IO_ERROR,
                  "cannot open '" + Path + "': " + std::strerror(Err));
  }
  Out = std::make_unique<PreadFile>(Fd, static_cast<uint64_t>(St.st_size));
  return Status::ok();
}

void registerForkHandlers(void (*Prepare)(), void (*Parent)(),
                          void (*Child)()) {
  ::pthread_atfork(Prepare, Parent, Child);
}

} // namespace kpack::platform
