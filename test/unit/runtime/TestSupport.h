//===- TestSupport.h - Helpers shared by the runtime unit tests -*- C++ -*-===//
#ifndef KPACK_TEST_RUNTIME_TESTSUPPORT_H
#define KPACK_TEST_RUNTIME_TESTSUPPORT_H

#include "ArchiveBuilder.h"

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kpack_test {

/// A fresh directory under $TMPDIR, removed with its contents at scope exit.
class TempDir {
public:
  TempDir() {
    std::string Template =
        (std::filesystem::temp_directory_path() / "kpack-rt-XXXXXX").string();
    if (!mkdtemp(Template.data()))
      throw std::runtime_error("mkdtemp failed");
    Path = Template;
  }
  ~TempDir() {
    std::error_code EC;
    std::filesystem::remove_all(Path, EC);
  }
  const std::string &path() const { return Path; }
  std::string file(const std::string &Name) const { return Path + "/" + Name; }
  /// Writes Data to path()/Name (creating parent directories); returns the
  /// path.
  std::string write(const std::string &Name, const Bytes &Data) const {
    std::string Full = file(Name);
    std::filesystem::create_directories(
        std::filesystem::path(Full).parent_path());
    if (!writeFile(Full, Data))
      throw std::runtime_error("cannot write " + Full);
    return Full;
  }

private:
  std::string Path;
};

inline std::string upstreamArchive(const char *Name) {
  return std::string(KPACK_UPSTREAM_TESTDATA) + "/" + Name;
}

} // namespace kpack_test

#endif
