//===- TestFiles.h - File helpers of the unit tests -----------------------===//
//
// Whole-file reads and writes and fresh temporary directories, for tests
// that work on files.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TEST_TESTFILES_H
#define KPACK_TEST_TESTFILES_H

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kpack::test {

std::vector<uint8_t> readFile(const std::string &Path);
void writeFile(const std::string &Path, const std::vector<uint8_t> &Bytes);
/// A fresh temporary directory (removed by the caller if it cares).
std::string makeTempDir();

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
