//===- AtomicFileTest.cpp - kpack::AtomicFile -----------------------------===//

#include "kpack/AtomicFile.h"

#include "TestArchive.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace kpack;
using namespace kpack::test;

namespace {

class AtomicFileTest : public ::testing::Test {
protected:
  void SetUp() override { Dir = makeTempDir(); }
  void TearDown() override { (void)std::system(("rm -rf '" + Dir + "'").c_str()); }
  int countFiles() {
    std::string Cmd = "exit $(ls -A '" + Dir + "' | wc -l)";
    return WEXITSTATUS(std::system(Cmd.c_str()));
  }
  std::string Dir;
};

TEST_F(AtomicFileTest, CommitReplacesAndPatches) {
  std::string P = Dir + "/out";
  writeFile(P, {'o', 'l', 'd'});
  AtomicFile F;
  ASSERT_FALSE(F.open(P));
  ASSERT_FALSE(F.write("hello world", 11));
  std::vector<uint8_t> Big(3 << 20, 'x'); // larger than the write buffer
  ASSERT_FALSE(F.write(Big));
  ASSERT_FALSE(F.writeAt(6, "WORLD", 5));
  EXPECT_TRUE(F.writeAt(F.offset() - 2, "abc", 3));
  EXPECT_EQ(F.offset(), 11u + Big.size());
  EXPECT_EQ(readFile(P), (std::vector<uint8_t>{'o', 'l', 'd'})); // not yet
  ASSERT_FALSE(F.commit());
  std::vector<uint8_t> Got = readFile(P);
  ASSERT_EQ(Got.size(), 11u + Big.size());
  EXPECT_EQ(std::string(Got.begin(), Got.begin() + 11), "hello WORLD");
  EXPECT_EQ(countFiles(), 1);
}

TEST_F(AtomicFileTest, DestructionWithoutCommitLeavesNothing) {
  std::string P = Dir + "/out";
  {
    AtomicFile F;
    ASSERT_FALSE(F.open(P));
    ASSERT_FALSE(F.write("x", 1));
    EXPECT_EQ(countFiles(), 1); // the temporary
  }
  EXPECT_EQ(countFiles(), 0);
}

TEST_F(AtomicFileTest, KeepsModeOfGivenFile) {
  std::string Ref = Dir + "/ref", P = Dir + "/out";
  writeFile(Ref, {1});
  ASSERT_EQ(::chmod(Ref.c_str(), 0751), 0);
  ASSERT_FALSE(writeFileAtomically(P, "abc", 3, AtomicFileOptions{true, Ref}));
  struct stat St;
  ASSERT_EQ(::stat(P.c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 07777, 0751u);
  // Default: an ordinary new file (0666 minus umask), not mkstemp's 0600.
  mode_t Mask = ::umask(022);
  ASSERT_FALSE(writeFileAtomically(P, "abc", 3));
  ::umask(Mask);
  ASSERT_EQ(::stat(P.c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 07777, 0644u);
}

TEST_F(AtomicFileTest, ReportsUnwritableDestination) {
  Status S = writeFileAtomically(Dir + "/no/such/dir/out", "x", 1);
  ASSERT_TRUE(S);
  EXPECT_NE(S.message().find("cannot create output file"), std::string::npos);
  EXPECT_TRUE(writeFileAtomically(Dir + "/ref", "x", 1, AtomicFileOptions{false, Dir + "/none"}));
  EXPECT_EQ(countFiles(), 0);
}

} // namespace
