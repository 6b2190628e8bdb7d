//===- FrameCacheTest.cpp - kpack::FrameCache and the writer's use of it --===//

#include "kpack/FrameCache.h"

#include "kpack/ArchiveWriter.h"

#include "TestArchive.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace kpack;
using namespace kpack::test;

namespace {

/// The entry files of a cache directory ("llvmcache-kpack-*").
std::vector<std::string> entries(const std::string &Dir) {
  std::vector<std::string> Out;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator I(Dir, EC), E; I != E && !EC;
       I.increment(EC))
    if (llvm::StringRef(I->path()).contains("llvmcache-kpack-"))
      Out.push_back(I->path());
  return Out;
}

class FrameCacheTest : public TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    CacheDir = Dir + "/cache";
  }

  /// Writes an archive of Count entries (the same ones every time) to Path
  /// with Cache (may be null) on Threads threads.
  void writeArchive(const std::string &Path,
                    std::shared_ptr<FrameCache> Cache, unsigned Threads = 2,
                    int Level = 3) {
    ArchiveWriterOptions O;
    O.GroupName = "g";
    O.Compression = ArchiveCompression::ZstdPerKernel;
    O.ZstdLevel = Level;
    O.Threads = Threads;
    O.Cache = std::move(Cache);
    ArchiveWriter W(O);
    for (unsigned I = 0; I < 6; ++I)
      ASSERT_FALSE(W.addEntry("lib#" + std::to_string(I), "gfx942",
                              EntrySource::fromOwnedBytes(
                                  patternBytes(20000 + 1000 * I, I))));
    Status S = W.write(Path);
    ASSERT_FALSE(S) << S.message();
  }

  std::shared_ptr<FrameCache> open(llvm::StringRef Policy = "") {
    std::shared_ptr<FrameCache> C;
    Status S = FrameCache::open(CacheDir, Policy, C);
    EXPECT_FALSE(S) << S.message();
    return C;
  }

  std::string CacheDir;
};

TEST_F(FrameCacheTest, MissThenHitSameArchive) {
  writeArchive(Dir + "/plain.kpack", nullptr);
  auto C = open();
  writeArchive(Dir + "/cold.kpack", C);
  EXPECT_EQ(C->counters().Hits, 0u);
  EXPECT_EQ(C->counters().Misses, 6u);
  EXPECT_EQ(C->counters().Stored, 6u);
  EXPECT_EQ(entries(CacheDir).size(), 6u);
  writeArchive(Dir + "/warm.kpack", C, 1);
  EXPECT_EQ(C->counters().Hits, 6u);
  EXPECT_EQ(C->counters().Stored, 6u);
  writeArchive(Dir + "/warm4.kpack", C, 4);
  EXPECT_EQ(readFile(Dir + "/plain.kpack"), readFile(Dir + "/cold.kpack"));
  EXPECT_EQ(readFile(Dir + "/plain.kpack"), readFile(Dir + "/warm.kpack"));
  EXPECT_EQ(readFile(Dir + "/plain.kpack"), readFile(Dir + "/warm4.kpack"));
}

TEST_F(FrameCacheTest, SettingsAreInTheKey) {
  auto C = open();
  writeArchive(Dir + "/l3.kpack", C, 2, 3);
  writeArchive(Dir + "/l5.kpack", C, 2, 5);
  EXPECT_EQ(C->counters().Hits, 0u);
  EXPECT_EQ(entries(CacheDir).size(), 12u);
  writeArchive(Dir + "/plain5.kpack", nullptr, 2, 5);
  EXPECT_EQ(readFile(Dir + "/l5.kpack"), readFile(Dir + "/plain5.kpack"));
  std::vector<uint8_t> B = patternBytes(100, 1);
  EXPECT_NE(FrameCache::keyOf(B.data(), B.size(), "a"),
            FrameCache::keyOf(B.data(), B.size(), "b"));
  EXPECT_EQ(FrameCache::hex(FrameCache::keyOf(B.data(), B.size(), "a")).size(),
            32u);
}

TEST_F(FrameCacheTest, CorruptEntryIgnoredAndRewritten) {
  auto C = open();
  writeArchive(Dir + "/cold.kpack", C);
  std::vector<std::string> Files = entries(CacheDir);
  ASSERT_EQ(Files.size(), 6u);
  // One truncated, one with a flipped frame byte, one empty.
  std::vector<uint8_t> T = readFile(Files[0]);
  T.resize(T.size() / 2);
  writeFile(Files[0], T);
  std::vector<uint8_t> F = readFile(Files[1]);
  F.back() ^= 0x40;
  writeFile(Files[1], F);
  writeFile(Files[2], {});
  writeArchive(Dir + "/again.kpack", C);
  EXPECT_EQ(C->counters().Invalid, 3u);
  EXPECT_EQ(C->counters().Hits, 3u);
  EXPECT_EQ(C->counters().Stored, 9u);
  EXPECT_EQ(readFile(Dir + "/cold.kpack"), readFile(Dir + "/again.kpack"));
  writeArchive(Dir + "/third.kpack", C);
  EXPECT_EQ(C->counters().Invalid, 3u);
  EXPECT_EQ(C->counters().Hits, 9u);
  EXPECT_EQ(readFile(Dir + "/cold.kpack"), readFile(Dir + "/third.kpack"));
}

TEST_F(FrameCacheTest, ConcurrentWritersShareOneDirectory) {
  writeArchive(Dir + "/plain.kpack", nullptr);
  // Separate caches on one directory, as separate links would have.
  std::vector<std::thread> Threads;
  for (unsigned I = 0; I < 6; ++I)
    Threads.emplace_back([this, I] {
      std::shared_ptr<FrameCache> C;
      ASSERT_FALSE(FrameCache::open(CacheDir, "", C));
      for (unsigned R = 0; R < 3; ++R)
        writeArchive(Dir + "/t" + std::to_string(I) + "_" + std::to_string(R) +
                         ".kpack",
                     C, 2);
    });
  for (std::thread &T : Threads)
    T.join();
  std::vector<uint8_t> Want = readFile(Dir + "/plain.kpack");
  for (unsigned I = 0; I < 6; ++I)
    for (unsigned R = 0; R < 3; ++R)
      EXPECT_EQ(readFile(Dir + "/t" + std::to_string(I) + "_" +
                         std::to_string(R) + ".kpack"),
                Want);
  EXPECT_EQ(entries(CacheDir).size(), 6u);
  // No temporary is left behind, and every entry is valid.
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator I(CacheDir, EC), E; I != E && !EC;
       I.increment(EC))
    EXPECT_FALSE(llvm::StringRef(I->path()).contains("kpack-tmp-"))
        << I->path();
  auto C = open();
  writeArchive(Dir + "/check.kpack", C);
  EXPECT_EQ(C->counters().Hits, 6u);
  EXPECT_EQ(C->counters().Invalid, 0u);
}

TEST_F(FrameCacheTest, PolicyErrorsAreOneLine) {
  llvm::CachePruningPolicy P;
  EXPECT_FALSE(FrameCache::parsePolicy(
      "prune_after=1h:cache_size_bytes=1m:prune_interval=0s", P));
  EXPECT_EQ(P.MaxSizeBytes, uint64_t(1) << 20);
  for (const char *Bad : {"prune_after=x", "nonsense=1", "cache_size_bytes=",
                          "cache_size=200%"}) {
    Status S = FrameCache::parsePolicy(Bad, P);
    ASSERT_TRUE(S) << Bad;
    EXPECT_EQ(S.message().find('\n'), std::string::npos) << S.message();
    EXPECT_NE(S.message().find(Bad), std::string::npos) << S.message();
  }
  std::shared_ptr<FrameCache> C;
  EXPECT_TRUE(FrameCache::open(CacheDir, "prune_after=x", C));
  EXPECT_FALSE(C);
}

TEST_F(FrameCacheTest, PrunedBySize) {
  {
    auto C = open("prune_interval=0s:cache_size_bytes=1000000");
    writeArchive(Dir + "/a.kpack", C);
  }
  EXPECT_EQ(entries(CacheDir).size(), 6u); // within the limit
  uint64_t Total = 0;
  for (const std::string &F : entries(CacheDir))
    Total += readFile(F).size();
  {
    // The limit below the cache's size: pruned (oldest first) to fit.
    auto C = open("prune_interval=0s:cache_size_bytes=" +
                  std::to_string(Total / 2));
  }
  uint64_t After = 0;
  for (const std::string &F : entries(CacheDir))
    After += readFile(F).size();
  EXPECT_LE(After, Total / 2);
  EXPECT_LT(entries(CacheDir).size(), 6u);
}

} // namespace
