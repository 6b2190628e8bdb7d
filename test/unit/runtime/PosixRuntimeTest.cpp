//===- PosixRuntimeTest.cpp - librocm_kpack's Linux semantics -------------===//
//
// The OS-facing behaviour of the C API on Linux (kpack/Platform.h's POSIX
// implementation); WindowsRuntimeTest.cpp is its Windows counterpart.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/SearchPaths.h"
#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <fcntl.h>
#include <functional>
#include <future>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace kpack_test;

namespace {

TEST(DiscoverBinaryPath, FindsTheExecutableAndOffset) {
  char Path[PATH_MAX];
  size_t Offset = 0;
  ASSERT_EQ(
      kpack_discover_binary_path(reinterpret_cast<const void *>(&kpack_open),
                                 Path, sizeof(Path), &Offset),
      KPACK_SUCCESS);
  char Self[PATH_MAX];
  ssize_t N = readlink("/proc/self/exe", Self, sizeof(Self) - 1);
  ASSERT_GT(N, 0);
  Self[N] = '\0';
  EXPECT_STREQ(Path, Self);
  EXPECT_GT(Offset, 0u);
  EXPECT_EQ(kpack_discover_binary_path(
                reinterpret_cast<const void *>(&kpack_open), Path, 4, &Offset),
            KPACK_ERROR_INVALID_ARGUMENT);
  int OnStack = 0;
  EXPECT_EQ(kpack_discover_binary_path(&OnStack, Path, sizeof(Path), nullptr),
            KPACK_ERROR_PATH_DISCOVERY_FAILED);
}

/// Runs Body on threads of its own and expects all of them to end within
/// 10 s. A FIFO nobody writes to keeps a reader's open(2) waiting for ever:
/// if one does not end, the FIFO is opened for writing (and closed) until it
/// does, which lets such an open go on, so that the test fails instead of
/// hanging.
void expectEndsInTime(const std::string &Fifo, unsigned Threads,
                      const std::function<void()> &Body) {
  std::vector<std::future<void>> Runs;
  for (unsigned I = 0; I < Threads; ++I)
    Runs.push_back(std::async(std::launch::async, Body));
  const auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (std::future<void> &Run : Runs) {
    if (Run.wait_until(Deadline) == std::future_status::ready)
      continue;
    ADD_FAILURE() << "a load waits on the FIFO " << Fifo;
    while (Run.wait_for(std::chrono::milliseconds(10)) !=
           std::future_status::ready) {
      int Fd = ::open(Fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (Fd >= 0)
        ::close(Fd);
    }
  }
}

/// Issue 25, item 5: a FIFO where an archive is looked for (an embedded
/// search path, ROCM_KPACK_PATH, ROCM_KPACK_PATH_PREFIX, kpack_open) is
/// refused at once as not a regular file, never opened in a way that waits
/// for a writer; the search goes on past it, and loads of it on other
/// threads (or later on the same cache) do not wait either.
class FifoArchive : public ::testing::Test {
protected:
  void SetUp() override {
    clearEnvironment();
    ArchiveSpec Spec;
    Spec.Family = "gfx1100";
    Spec.Arches = {"gfx1100"};
    Spec.Entries = {{"lib/libfoo.so#0", "gfx1100", payload("real", 500)}};
    Real = Dir.write("real/foo_gfx1100.kpack", buildArchive(Spec));
    Binary = Dir.write("lib/libfoo.so", Bytes{0x7f, 'E', 'L', 'F'});
    Fifo = Dir.file("fifo/foo_gfx1100.kpack");
    Dir.write("fifo/placeholder", Bytes{});
    ASSERT_EQ(::mkfifo(Fifo.c_str(), 0600), 0);
  }
  void TearDown() override { clearEnvironment(); }
  static void clearEnvironment() {
    for (const char *Var : kpack::KpackEnvironmentVariables)
      unsetenv(Var);
  }

  /// Loads lib/libfoo.so#0 for gfx1100 through Cache, searching Paths.
  kpack_error_t load(kpack_cache_t Cache, const std::vector<std::string> &Paths,
                     std::string &Out) {
    Bytes Meta = hipkMetadata("lib/libfoo.so", Paths);
    const char *Arches[] = {"gfx1100"};
    void *Data = nullptr;
    size_t Size = 0;
    kpack_error_t Err = kpack_load_code_object(Cache, Meta.data(), Binary.c_str(),
                                               0, Arches, 1, &Data, &Size);
    if (Err == KPACK_SUCCESS)
      Out.assign(static_cast<const char *>(Data), Size);
    kpack_free_code_object(Data);
    return Err;
  }
  /// Loads on Threads threads at once, each through a cache of its own and
  /// through one shared cache, and twice more on that one; every load must
  /// end and give Expected.
  void loadEverywhere(const std::vector<std::string> &Paths,
                      kpack_error_t Expected) {
    kpack_cache_t Shared = nullptr;
    ASSERT_EQ(kpack_cache_create(&Shared), KPACK_SUCCESS);
    const std::string Want(reinterpret_cast<const char *>(payload("real", 500).data()), 500);
    expectEndsInTime(Fifo, 4, [&] {
      kpack_cache_t Own = nullptr;
      ASSERT_EQ(kpack_cache_create(&Own), KPACK_SUCCESS);
      for (kpack_cache_t C : {Own, Shared, Shared}) {
        std::string Out;
        EXPECT_EQ(load(C, Paths, Out), Expected);
        if (Expected == KPACK_SUCCESS) {
          EXPECT_EQ(Out, Want);
        }
      }
      kpack_cache_destroy(Own);
    });
    kpack_cache_destroy(Shared);
  }

  TempDir Dir;
  std::string Real, Binary, Fifo;
};

TEST_F(FifoArchive, KpackOpenRefusesItAtOnce) {
  expectEndsInTime(Fifo, 2, [&] {
    kpack_archive_t A = nullptr;
    EXPECT_EQ(kpack_open(Fifo.c_str(), &A), KPACK_ERROR_IO_ERROR);
    EXPECT_EQ(A, nullptr);
  });
}

TEST_F(FifoArchive, EmbeddedSearchPath) {
  loadEverywhere({"../fifo/foo_@GFXARCH@.kpack", "../real/foo_@GFXARCH@.kpack"},
                 KPACK_SUCCESS);
  loadEverywhere({"../fifo/foo_@GFXARCH@.kpack"}, KPACK_ERROR_ARCHIVE_NOT_FOUND);
}

TEST_F(FifoArchive, RocmKpackPath) {
  setenv("ROCM_KPACK_PATH", (Fifo + ":" + Real).c_str(), 1);
  loadEverywhere({"nothing.kpack"}, KPACK_SUCCESS);
  setenv("ROCM_KPACK_PATH", Fifo.c_str(), 1);
  loadEverywhere({"nothing.kpack"}, KPACK_ERROR_ARCHIVE_NOT_FOUND);
}

TEST_F(FifoArchive, RocmKpackPathPrefix) {
  setenv("ROCM_KPACK_PATH_PREFIX", Fifo.c_str(), 1);
  loadEverywhere({"../real/foo_@GFXARCH@.kpack"}, KPACK_SUCCESS);
}

// Other files that are not regular files are refused the same way, without
// being read: a directory and a character device.
TEST_F(FifoArchive, DirectoryAndDevice) {
  for (const char *Path : {"/dev/null", "/dev/zero", "/"}) {
    kpack_archive_t A = nullptr;
    EXPECT_EQ(kpack_open(Path, &A), KPACK_ERROR_IO_ERROR) << Path;
  }
}

} // namespace
