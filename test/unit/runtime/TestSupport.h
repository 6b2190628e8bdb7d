//===- TestSupport.h - Helpers shared by the runtime unit tests -*- C++ -*-===//
#ifndef KPACK_TEST_RUNTIME_TESTSUPPORT_H
#define KPACK_TEST_RUNTIME_TESTSUPPORT_H

#include "ArchiveBuilder.h"

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#ifndef _WIN32
#include <fcntl.h>
#include <unistd.h>
#endif

#ifdef _WIN32
// The POSIX calls the tests use, for the Windows build (cmake/windows): the
// variables are set in the process environment block (which the runtime
// reads, in UTF-16) and in the C runtime's copy.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
inline int setenv(const char *Name, const char *Value, int) {
  auto Wide = [](const char *S) {
    std::wstring W(static_cast<size_t>(MultiByteToWideChar(CP_UTF8, 0, S, -1,
                                                           nullptr, 0)),
                   L'\0');
    MultiByteToWideChar(CP_UTF8, 0, S, -1, W.data(),
                        static_cast<int>(W.size()));
    return W;
  };
  _putenv_s(Name, Value);
  return SetEnvironmentVariableW(Wide(Name).c_str(), Wide(Value).c_str()) ? 0
                                                                           : -1;
}
inline int unsetenv(const char *Name) {
  _putenv_s(Name, "");
  return SetEnvironmentVariableA(Name, nullptr) ||
                 GetLastError() == ERROR_ENVVAR_NOT_FOUND
             ? 0
             : -1;
}
#endif

namespace kpack_test {

/// A fresh directory under $TMPDIR, removed with its contents at scope exit.
class TempDir {
public:
  TempDir() {
    std::random_device Random;
    for (int Attempt = 0; Attempt < 100; ++Attempt) {
      std::filesystem::path Candidate =
          std::filesystem::temp_directory_path() /
          ("kpack-rt-" + std::to_string(Random()));
      std::error_code EC;
      if (std::filesystem::create_directory(Candidate, EC)) {
        Path = Candidate.u8string();
        return;
      }
    }
    throw std::runtime_error("cannot create a temporary directory");
  }
  ~TempDir() {
    std::error_code EC;
    std::filesystem::remove_all(std::filesystem::u8path(Path), EC);
  }
  const std::string &path() const { return Path; }
  std::string file(const std::string &Name) const { return Path + "/" + Name; }
  /// Writes Data to path()/Name (creating parent directories); returns the
  /// path.
  std::string write(const std::string &Name, const Bytes &Data) const {
    std::string Full = file(Name);
    std::filesystem::create_directories(
        std::filesystem::u8path(Full).parent_path());
    if (!writeFile(Full, Data))
      throw std::runtime_error("cannot write " + Full);
    return Full;
  }

private:
  std::string Path;
};

#ifndef _WIN32
/// Writes a file of Size bytes that holds Pieces (offset, bytes) and zeros
/// elsewhere, sparse: the zeros take no disk space, so a terabyte costs
/// nothing (ftruncate). Returns whether it was written.
inline bool writeSparse(const std::string &Path, uint64_t Size,
                        const std::vector<std::pair<uint64_t, Bytes>> &Pieces) {
  int Fd = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (Fd < 0)
    return false;
  bool Ok = ::ftruncate(Fd, static_cast<off_t>(Size)) == 0;
  for (const auto &[Offset, Data] : Pieces)
    Ok = Ok && ::pwrite(Fd, Data.data(), Data.size(),
                        static_cast<off_t>(Offset)) ==
                   static_cast<ssize_t>(Data.size());
  return ::close(Fd) == 0 && Ok;
}
#endif

inline std::string upstreamArchive(const char *Name) {
  return std::string(KPACK_UPSTREAM_TESTDATA) + "/" + Name;
}

} // namespace kpack_test

#endif
