//===- LoaderLifetimeTest.cpp - The loader cache over time and fork -------===//
//
// LoaderCache (runtime/src/LoaderCache.cpp): a failed open is kept only while
// the path names the same file (or nothing); fork() while another thread is
// inside a load leaves the child a cache whose next load completes.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/LoaderCache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kpack_test;
using kpack::KpackEnvironment;
using kpack::KpackMetadata;
using kpack::LoaderCache;

namespace {

Bytes archiveBytes(const std::string &Tag) {
  ArchiveSpec Spec;
  Spec.Arches = {"gfx1100"};
  Spec.Entries = {{"lib/libfoo.so#0", "gfx1100", payload(Tag, 900)}};
  return buildArchive(Spec);
}

/// Loads lib/libfoo.so#0 for gfx1100 from the archive at Path.
kpack_error_t loadFrom(LoaderCache &Cache, const std::string &Path,
                       std::string *Out = nullptr) {
  KpackMetadata Ref{"lib/libfoo.so", {Path}};
  void *Data = nullptr;
  size_t Size = 0;
  kpack::Status Err =
      Cache.loadCodeObject(Ref, "/nonexistent/app", 0, {"gfx1100"}, Data, Size);
  if (!Err && Out)
    Out->assign(static_cast<const char *>(Data), Size);
  std::free(Data);
  return Err.code();
}

std::string str(const Bytes &B) { return std::string(B.begin(), B.end()); }

TEST(LoaderFailureCache, MissingArchiveCopiedIntoPlaceIsFound) {
  TempDir Dir;
  LoaderCache Cache{KpackEnvironment()};
  const std::string Path = Dir.file("foo_gfx1100.kpack");
  EXPECT_EQ(loadFrom(Cache, Path), KPACK_ERROR_ARCHIVE_NOT_FOUND);
  EXPECT_EQ(loadFrom(Cache, Path), KPACK_ERROR_ARCHIVE_NOT_FOUND);
  Dir.write("foo_gfx1100.kpack", archiveBytes("installed"));
  std::string Out;
  ASSERT_EQ(loadFrom(Cache, Path, &Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("installed", 900)));
}

TEST(LoaderFailureCache, CorruptArchiveReplacedByRenameIsFound) {
  TempDir Dir;
  LoaderCache Cache{KpackEnvironment()};
  const std::string Path =
      Dir.write("foo_gfx1100.kpack", Bytes{'n', 'o', 't', ' ', 'k', 'p', 'a',
                                           'k', 0, 0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(loadFrom(Cache, Path), KPACK_ERROR_ARCHIVE_NOT_FOUND);
  const std::string Staged = Dir.write("staged.kpack", archiveBytes("fixed"));
  ASSERT_EQ(std::rename(Staged.c_str(), Path.c_str()), 0);
  std::string Out;
  ASSERT_EQ(loadFrom(Cache, Path, &Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("fixed", 900)));
}

TEST(LoaderFailureCache, CorruptArchiveOverwrittenInPlaceIsFound) {
  TempDir Dir;
  LoaderCache Cache{KpackEnvironment()};
  Bytes Good = archiveBytes("rewritten");
  Bytes Corrupt = Good;
  Corrupt.resize(Good.size() / 2); // truncated: the TOC is gone
  const std::string Path = Dir.write("foo_gfx1100.kpack", Corrupt);
  EXPECT_EQ(loadFrom(Cache, Path), KPACK_ERROR_ARCHIVE_NOT_FOUND);
  Dir.write("foo_gfx1100.kpack", Good); // same inode, now complete
  std::string Out;
  ASSERT_EQ(loadFrom(Cache, Path, &Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("rewritten", 900)));
}

// An unchanged failure is still cached: later loads stat the path once and
// neither resolve it again nor reopen it.
TEST(LoaderFailureCache, UnchangedFailureIsNotProbedAgain) {
  TempDir Dir;
  LoaderCache Cache{KpackEnvironment()};
  const std::string Corrupt = Dir.write("corrupt.kpack", Bytes(40, 'x'));
  const std::string Missing = Dir.file("missing.kpack");
  for (int I = 0; I < 4; ++I) {
    EXPECT_EQ(loadFrom(Cache, Corrupt), KPACK_ERROR_ARCHIVE_NOT_FOUND);
    EXPECT_EQ(loadFrom(Cache, Missing), KPACK_ERROR_ARCHIVE_NOT_FOUND);
  }
  kpack::LoaderStats S = Cache.stats();
  EXPECT_EQ(S.PathLookups, 2u);
  EXPECT_EQ(S.ArchiveOpens, 1u);
  EXPECT_EQ(S.FailureChecks, 6u);
}

/// Waits up to Seconds for Child; kills it if it is still running. Returns
/// its exit code, or -1 if it had to be killed or did not exit normally.
int waitForChild(pid_t Child, int Seconds) {
  const auto Deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(Seconds);
  for (;;) {
    int Status = 0;
    pid_t R = ::waitpid(Child, &Status, WNOHANG);
    if (R == Child)
      return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
    if (R < 0 || std::chrono::steady_clock::now() > Deadline) {
      ::kill(Child, SIGKILL);
      ::waitpid(Child, &Status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Another thread is inside a load, opening an archive that takes long (a
// network mount: LoaderCache::BeforeOpenForTesting holds it; a FIFO, which
// stood for one, is now refused at once), when the process forks: the
// child's next load, of another archive through the same cache, completes.
TEST(LoaderFork, ChildLoadsWhileAnotherThreadIsOpeningAnArchive) {
  TempDir Dir;
  const std::string Good = Dir.write("good.kpack", archiveBytes("child"));
  const std::string Slow = Dir.write("slow.kpack", archiveBytes("slow"));
  LoaderCache Cache{KpackEnvironment()};
  // Spins rather than waits on a condition variable: the child must not
  // inherit a lock.
  std::atomic<bool> Opening{false}, Release{false};
  Cache.BeforeOpenForTesting = [&](const std::string &Path) {
    if (Path.size() < 10 || Path.compare(Path.size() - 10, 10, "slow.kpack"))
      return;
    Opening = true;
    while (!Release)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };

  std::atomic<int> Blocked{-1};
  std::thread Opener([&] { Blocked = loadFrom(Cache, Slow); });
  while (!Opening)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  pid_t Child = ::fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    std::string Out;
    const bool Ok = loadFrom(Cache, Good, &Out) == KPACK_SUCCESS &&
                    Out == str(payload("child", 900));
    std::_Exit(Ok ? 0 : 1);
  }
  EXPECT_EQ(waitForChild(Child, 20), 0) << "the child's load did not complete";

  Release = true;
  Opener.join();
  EXPECT_EQ(Blocked.load(), KPACK_SUCCESS);
  // The parent's cache is intact.
  EXPECT_EQ(loadFrom(Cache, Good), KPACK_SUCCESS);
}

// Threads load continuously (version-2 archives: segment locks, the decoder
// pool, the segment index) while the process forks repeatedly; every child
// loads through the same cache and exits.
TEST(LoaderFork, ChildrenLoadWhileThreadsLoad) {
  TempDir Dir;
  ArchiveSpec Spec;
  Spec.Scheme = "zstd-shared-segments";
  Spec.Arches = {"gfx1100"};
  Bytes A = payload("seg-a", 200000), B = payload("seg-b", 100000);
  Spec.Segments = {A, B};
  for (uint32_t I = 0; I < 4; ++I) {
    Bytes Data = payload("co" + std::to_string(I), 3000);
    Data.insert(Data.end(), A.begin(), A.end());
    Spec.Entries.push_back(
        {"lib/libfoo.so#" + std::to_string(I), "gfx1100", Data});
    Spec.EntrySegments.push_back({0});
  }
  const std::string Path = Dir.write("shared.kpack", buildArchive(Spec));
  LoaderCache Cache{KpackEnvironment()};
  KpackMetadata Ref{"lib/libfoo.so", {Path}};

  std::atomic<bool> Stop{false};
  std::atomic<int> Failures{0};
  std::vector<std::thread> Loaders;
  for (uint32_t T = 0; T < 3; ++T)
    Loaders.emplace_back([&, T] {
      for (uint32_t Round = 0; !Stop; ++Round) {
        void *Data = nullptr;
        size_t Size = 0;
        if (Cache.loadCodeObject(Ref, "/nonexistent/app", (T + Round) % 4,
                                 {"gfx1100"}, Data, Size))
          ++Failures;
        std::free(Data);
      }
    });
  int Hung = 0, Failed = 0;
  for (int I = 0; I < 20; ++I) {
    pid_t Child = ::fork();
    if (Child == 0) {
      void *Data = nullptr;
      size_t Size = 0;
      bool Ok = !Cache.loadCodeObject(Ref, "/nonexistent/app", uint32_t(I % 4),
                                      {"gfx1100"}, Data, Size) &&
                Size == Spec.Entries[I % 4].Data.size() &&
                std::memcmp(Data, Spec.Entries[I % 4].Data.data(), Size) == 0;
      std::_Exit(Ok ? 0 : 1);
    }
    if (Child < 0)
      break;
    int Code = waitForChild(Child, 20);
    Hung += Code == -1;
    Failed += Code > 0;
  }
  Stop = true;
  for (std::thread &T : Loaders)
    T.join();
  EXPECT_EQ(Hung, 0);
  EXPECT_EQ(Failed, 0);
  EXPECT_EQ(Failures.load(), 0);
}

// A child forked while another thread makes the process's first cache
// makes a cache of its own, in 100 fresh processes (children of this one,
// which must not have made a cache yet: ctest runs each test in a process
// of its own).
TEST(LoaderFork, ChildMakesACacheWhileAnotherThreadMakesTheFirst) {
  int Hung = 0, Failed = 0;
  for (int I = 0; I < 100 && !Hung; ++I) {
    pid_t Fresh = ::fork();
    ASSERT_GE(Fresh, 0);
    if (Fresh == 0) {
      std::thread Maker([] { LoaderCache C{KpackEnvironment()}; });
      pid_t Child = ::fork();
      if (Child == 0) {
        LoaderCache C{KpackEnvironment()};
        std::_Exit(0);
      }
      int Code = Child < 0 ? 1 : waitForChild(Child, 10);
      Maker.join();
      std::_Exit(Code == -1 ? 2 : Code);
    }
    int Code = waitForChild(Fresh, 20);
    Hung += Code == -1 || Code == 2;
    Failed += Code == 1;
  }
  EXPECT_EQ(Hung, 0);
  EXPECT_EQ(Failed, 0);
}

} // namespace
