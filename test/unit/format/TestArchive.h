//===- TestArchive.h - Independent .kpack decoder for the writer tests ----===//
//
// Decodes an archive the way upstream's reader does (header, msgpack TOC,
// walking the frame-size chain), written separately from the project's
// runtime reader so the writer tests do not depend on it.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TEST_TESTARCHIVE_H
#define KPACK_TEST_TESTARCHIVE_H

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kpack::test {

struct DecodedEntry {
  std::string Key, Arch;
  uint64_t Ordinal = 0, OriginalSize = 0;
  bool HasFrameOffset = false;
  uint64_t FrameOffset = 0, FrameSize = 0;
  std::vector<uint8_t> Bytes; ///< decompressed payload
  bool FrameHasContentSize = false;
};

struct DecodedArchive {
  std::string GroupName, Family, Scheme;
  std::vector<std::string> Arches;
  std::vector<std::string> TopLevelKeys; ///< TOC map keys in file order
  std::vector<DecodedEntry> Entries;     ///< in TOC order
};

/// Reads a whole archive file; returns "" or an error message.
std::string decodeArchive(const std::string &Path, DecodedArchive &Out);
std::vector<uint8_t> readFile(const std::string &Path);
void writeFile(const std::string &Path, const std::vector<uint8_t> &Bytes);
/// A fresh temporary directory (removed by the caller if it cares).
std::string makeTempDir();
/// Compressible bytes, different for every seed.
std::vector<uint8_t> patternBytes(size_t Size, unsigned Seed);

/// A test with a fresh temporary directory, Dir, removed after the test.
class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    Dir = makeTempDir();
    ASSERT_FALSE(Dir.empty());
  }
  void TearDown() override;
  std::string Dir;
};

} // namespace kpack::test

#endif
