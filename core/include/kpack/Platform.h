//===- kpack/Platform.h - The few OS-facing functions -----------*- C++ -*-===//
//
// Everything the runtime, the core and the stand-in ask of the operating
// system, in one small interface with one implementation per OS:
// core/src/platform/Posix.cpp (Linux) and core/src/platform/Windows.cpp
// (mingw-w64; docs/runtime.md "Windows"). CMake compiles exactly one of them;
// no other file of core/ or runtime/ tests for the OS.
//
// Paths are UTF-8 std::strings on every OS; the Windows implementation
// converts them to UTF-16 at the system call and back.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_PLATFORM_H
#define KPACK_PLATFORM_H

#include "kpack/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kpack::platform {

/// ':' on POSIX, ';' on Windows: separates the items of ROCM_KPACK_PATH and
/// ROCM_KPACK_PATH_PREFIX (FORMAT.md §3.3).
extern const char PathListSeparator;

/// The environment variable Name as UTF-8, or nullopt when unset.
std::optional<std::string> getEnv(const char *Name);

/// True for a path that does not depend on a current directory ("/x";
/// on Windows also "C:\x", "C:/x", "\\server\share\x").
bool isAbsolutePath(std::string_view Path);

/// True for a directory separator ('/'; on Windows also '\\').
bool isDirectorySeparator(char C);

/// How many bytes from Address on are readable, at most Max
/// (kpack/ReadableMemory.h).
size_t readableBytesAt(const void *Address, size_t Max);

/// The file of the loaded object that holds Address, and the file offset
/// Address corresponds to (kpack_discover_binary_path).
Status binaryPathOf(const void *Address, std::string &Path, uint64_t &Offset);

/// The canonical absolute path of an existing file (realpath; on Windows
/// the final path of the opened file); FILE_NOT_FOUND otherwise.
Status canonicalPath(const std::string &Path, std::string &Canonical);

/// True for a path that names a directory (following symbolic links).
bool isDirectory(const std::string &Path);

/// The names in directory Dir ("." and ".." left out), in no particular
/// order; symbolic links are listed, not followed. FILE_NOT_FOUND when Dir
/// does not exist, IO_ERROR when it cannot be read.
Status listDirectory(const std::string &Dir, std::vector<std::string> &Names);

/// What a path named when it was looked at: a file's identity, or nothing.
struct FileIdentity {
  bool Exists = false;
  uint64_t Device = 0, Inode = 0, Size = 0;
  int64_t ModifiedSec = 0, ModifiedNsec = 0, ChangedSec = 0, ChangedNsec = 0;
  static FileIdentity of(const std::string &Path);
  bool operator==(const FileIdentity &O) const;
};

/// An archive file opened for random-access reads (pread on POSIX, a
/// read-only mapping on Windows). readAt is thread-safe.
class ReadOnlyFile {
public:
  virtual ~ReadOnlyFile() = default;
  uint64_t size() const { return Size; }
  /// Exactly Length bytes at Offset; the range must lie within size().
  virtual Status readAt(uint64_t Offset, void *Dest, size_t Length) const = 0;

  /// FILE_NOT_FOUND for a missing file or directory component, IO_ERROR
  /// for anything else that is not a readable regular file.
  static Status open(const std::string &Path,
                     std::unique_ptr<ReadOnlyFile> &Out);

protected:
  uint64_t Size = 0;
};

/// Handlers run around fork() (pthread_atfork); nothing on Windows, which
/// has no fork.
void registerForkHandlers(void (*Prepare)(), void (*Parent)(),
                          void (*Child)());

/// The last OS error as text (strerror(errno); FormatMessage on Windows).
std::string lastErrorMessage();

} // namespace kpack::platform

#endif
