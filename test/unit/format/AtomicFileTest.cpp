//===- AtomicFileTest.cpp - kpack::AtomicFile -----------------------------===//

#include "kpack/AtomicFile.h"

#include "TestFiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sys/stat.h>
#include <thread>
#include <cstdio>
#include <unistd.h>

using namespace kpack;
using namespace kpack::test;

namespace {

class AtomicFileTest : public TempDirTest {
protected:
  int countFiles() {
    std::string Cmd = "exit $(ls -A '" + Dir + "' | wc -l)";
    return WEXITSTATUS(std::system(Cmd.c_str()));
  }
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

// Reserved ranges are filled later, from several threads at once; appends
// after them land after the reserved bytes.
TEST_F(AtomicFileTest, ReservedRangesAreWrittenFromThreads) {
  std::string P = Dir + "/out";
  AtomicFile F;
  ASSERT_FALSE(F.open(P));
  ASSERT_FALSE(F.write("head", 4)); // buffered
  uint64_t A = 0, B = 0;
  ASSERT_FALSE(F.reserve(3, A));
  ASSERT_FALSE(F.reserve(2 << 20, B)); // larger than the write buffer
  EXPECT_EQ(A, 4u);
  EXPECT_EQ(B, 7u);
  ASSERT_FALSE(F.write("tail", 4));
  EXPECT_EQ(F.offset(), 11u + (2 << 20));
  std::vector<uint8_t> Big(2 << 20, 'b');
  Status SA, SB;
  std::thread TA([&] { SA = F.writeReserved(A, "aaa", 3); });
  std::thread TB([&] { SB = F.writeReserved(B, Big.data(), Big.size()); });
  TA.join();
  TB.join();
  EXPECT_FALSE(SA) << SA.message();
  EXPECT_FALSE(SB) << SB.message();
  EXPECT_TRUE(F.writeReserved(F.offset() - 1, "xy", 2)); // past the end
  ASSERT_FALSE(F.commit());
  std::vector<uint8_t> Got = readFile(P);
  ASSERT_EQ(Got.size(), 11u + Big.size());
  EXPECT_EQ(std::string(Got.begin(), Got.begin() + 7), "headaaa");
  EXPECT_TRUE(std::equal(Big.begin(), Big.end(), Got.begin() + 7));
  EXPECT_EQ(std::string(Got.end() - 4, Got.end()), "tail");
}

// An output naming a special file (/dev/null, a FIFO) is written into, not
// renamed over: as root, a rename would replace /dev/null itself.
// Commits are one at a time in a process (the signal handler undoes the
// one in progress): threads that commit at once wait, none fails.
TEST_F(AtomicFileTest, CommitsFromThreadsAtOnceAllLand) {
  // A first file on this thread, as a tool's main thread does: LLVM puts
  // its alternate signal stack on the thread that first registers its
  // signal handlers (TempFile), and ASan cannot unmap that stack when a
  // worker thread ends.
  AtomicFile First;
  ASSERT_FALSE(First.open(Dir + "/first"));
  First.discard();
  std::vector<std::thread> Threads;
  std::vector<int> Failures(8, 0);
  for (int T = 0; T < 8; ++T)
    Threads.emplace_back([&, T] {
      for (int R = 0; R < 20; ++R) {
        std::string P = Dir + "/t" + std::to_string(T) + "_" + std::to_string(R);
        AtomicFile F;
        if (F.open(P) || F.write("x", 1) || F.commit())
          ++Failures[T];
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failures, std::vector<int>(8, 0));
  EXPECT_EQ(countFiles(), 8 * 20); // under 256 (an exit status)
}

TEST_F(AtomicFileTest, SpecialDestinationIsWrittenIntoNotReplaced) {
  std::string P = Dir + "/fifo";
  ASSERT_EQ(::mkfifo(P.c_str(), 0600), 0);
  std::string Got;
  std::thread Reader([&] {
    if (FILE *F = std::fopen(P.c_str(), "rb")) {
      char Buf[4096];
      for (size_t N; (N = std::fread(Buf, 1, sizeof(Buf), F)) > 0;)
        Got.append(Buf, N);
      std::fclose(F);
    }
  });
  AtomicFile F;
  ASSERT_FALSE(F.open(P));
  ASSERT_FALSE(F.write("through the pipe", 16));
  Status S = F.commit();
  Reader.join();
  EXPECT_FALSE(S) << S.message();
  EXPECT_EQ(Got, "through the pipe");
  struct stat St;
  ASSERT_EQ(::lstat(P.c_str(), &St), 0);
  EXPECT_TRUE(S_ISFIFO(St.st_mode));
  EXPECT_EQ(countFiles(), 1); // no temporary file left
  // /dev/null as the destination of a commit stays a character device.
  AtomicFile N;
  ASSERT_FALSE(N.open("/dev/null"));
  N.discard();
  ASSERT_FALSE(writeFileAtomically("/dev/null", "x", 1));
  ASSERT_EQ(::stat("/dev/null", &St), 0);
  EXPECT_TRUE(S_ISCHR(St.st_mode));
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

namespace {

// commitTogether: a failing rename puts back the destinations the earlier
// renames replaced; nothing else is left behind.
TEST_F(AtomicFileTest, CommitTogetherIsAllOrNothing) {
  std::string A = Dir + "/a", B = Dir + "/sub/b";
  writeFile(A, {'o', 'l', 'd'});
  ASSERT_EQ(::mkdir((Dir + "/sub").c_str(), 0755), 0);
  AtomicFile FA, FB;
  ASSERT_FALSE(FA.open(A));
  ASSERT_FALSE(FA.write("new", 3));
  ASSERT_FALSE(FB.open(B));
  ASSERT_FALSE(FB.write("b", 1));
  // B's rename fails: its destination is now a non-empty directory.
  ASSERT_EQ(::mkdir(B.c_str(), 0755), 0);
  writeFile(B + "/x", {'x'});
  Status S = commitTogether({&FA, &FB});
  ASSERT_TRUE(S);
  EXPECT_EQ(readFile(A), (std::vector<uint8_t>{'o', 'l', 'd'}));
  EXPECT_EQ(countFiles(), 2); // a, sub
  EXPECT_EQ(WEXITSTATUS(std::system(("exit $(ls -A '" + Dir + "/sub' | wc -l)").c_str())), 1);

  // Both succeed.
  ASSERT_EQ(std::system(("rm -rf '" + B + "'").c_str()), 0);
  ASSERT_FALSE(FA.open(A));
  ASSERT_FALSE(FA.write("new", 3));
  ASSERT_FALSE(FB.open(B));
  ASSERT_FALSE(FB.write("b", 1));
  ASSERT_FALSE(commitTogether({&FA, &FB}));
  EXPECT_EQ(readFile(A), (std::vector<uint8_t>{'n', 'e', 'w'}));
  EXPECT_EQ(readFile(B), (std::vector<uint8_t>{'b'}));
  EXPECT_EQ(countFiles(), 2);
}

// commitPathsTogether: a directory and a file replace their destinations
// together; a failing later rename puts both back (and the staged outputs
// back where they were), leaving no backup behind.
TEST_F(AtomicFileTest, CommitPathsTogetherRestoresDirectoryAndFile) {
  std::string Out = Dir + "/out", Stage = Dir + "/stage";
  ASSERT_EQ(::mkdir(Out.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(Stage.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((Out + "/d").c_str(), 0755), 0);
  writeFile(Out + "/d/old", {'o'});
  writeFile(Out + "/f", {'o', 'l', 'd'});
  ASSERT_EQ(::mkdir((Out + "/x").c_str(), 0755), 0);
  writeFile(Out + "/x/keep", {'k'});
  ASSERT_EQ(::mkdir((Stage + "/d").c_str(), 0755), 0);
  writeFile(Stage + "/d/new", {'n'});
  writeFile(Stage + "/f", {'n', 'e', 'w'});
  writeFile(Stage + "/x", {'x'});
  auto Count = [](const std::string &D) {
    return WEXITSTATUS(
        std::system(("exit $(ls -A '" + D + "' | wc -l)").c_str()));
  };
  // x's rename fails: a file does not replace a non-empty directory.
  Status S = commitPathsTogether({{Stage + "/d", Out + "/d"},
                                  {Stage + "/f", Out + "/f"},
                                  {Stage + "/x", Out + "/x"}});
  ASSERT_TRUE(S);
  EXPECT_EQ(readFile(Out + "/d/old"), (std::vector<uint8_t>{'o'}));
  EXPECT_EQ(Count(Out + "/d"), 1);
  EXPECT_EQ(readFile(Out + "/f"), (std::vector<uint8_t>{'o', 'l', 'd'}));
  EXPECT_EQ(readFile(Out + "/x/keep"), (std::vector<uint8_t>{'k'}));
  EXPECT_EQ(Count(Out), 3);
  EXPECT_EQ(readFile(Stage + "/d/new"), (std::vector<uint8_t>{'n'}));
  EXPECT_EQ(readFile(Stage + "/f"), (std::vector<uint8_t>{'n', 'e', 'w'}));
  EXPECT_EQ(Count(Stage), 3); // d, f, x: no backup left

  // Without x, both replace their destinations.
  ASSERT_FALSE(commitPathsTogether(
      {{Stage + "/d", Out + "/d"}, {Stage + "/f", Out + "/f"}}));
  EXPECT_EQ(readFile(Out + "/d/new"), (std::vector<uint8_t>{'n'}));
  EXPECT_EQ(Count(Out + "/d"), 1);
  EXPECT_EQ(readFile(Out + "/f"), (std::vector<uint8_t>{'n', 'e', 'w'}));
  EXPECT_EQ(Count(Out), 3);
  EXPECT_EQ(Count(Stage), 1); // x
}

// OutputDirectories: what a failed run made is removed (trees whole,
// created directories if empty); keep() leaves everything.
TEST_F(AtomicFileTest, OutputDirectoriesUndoUnlessKept) {
  ASSERT_EQ(::mkdir((Dir + "/had").c_str(), 0755), 0);
  {
    OutputDirectories D;
    ASSERT_FALSE(D.create(Dir + "/had/new/deeper"));
    ASSERT_FALSE(D.create(Dir + "/kept-full"));
    writeFile(Dir + "/kept-full/file", {1});
    std::string Tree;
    ASSERT_FALSE(D.createTree(Dir, ".stage-", Tree));
    ASSERT_EQ(::mkdir((Tree + "/ro").c_str(), 0755), 0);
    writeFile(Tree + "/ro/f", {1});
    ASSERT_EQ(::chmod((Tree + "/ro").c_str(), 0555), 0);
    EXPECT_EQ(countFiles(), 3);
  }
  // had stays (it existed), had/new goes; kept-full stays (not empty).
  EXPECT_EQ(countFiles(), 2);
  EXPECT_NE(::access((Dir + "/had/new").c_str(), F_OK), 0);
  {
    OutputDirectories D;
    ASSERT_FALSE(D.create(Dir + "/made"));
    std::string Tree;
    ASSERT_FALSE(D.createTree(Dir, ".stage-", Tree));
    D.keep();
  }
  EXPECT_EQ(countFiles(), 4);
}

} // namespace
