//===- LoaderTest.cpp - kpack_load_code_object and the loader cache -------===//

#include "TestSupport.h"

#include "kpack/Platform.h"
#include "kpack/SearchPaths.h"
#include "kpack/LoaderCache.h"
#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace kpack_test;
using kpack::LoaderCache;
using kpack::KpackEnvironment;

namespace {

/// An install tree: <root>/lib/libfoo.so (the "binary", never opened) with
/// per-architecture archives <root>/.kpack/foo_<arch>.kpack.
class LoaderTest : public ::testing::Test {
protected:
  void SetUp() override {
    clearLoaderEnvironment();
    for (const char *Arch : {"gfx1100", "gfx1101"}) {
      ArchiveSpec Spec;
      Spec.Family = Arch;
      Spec.Arches = {Arch};
      for (int Index = 0; Index < 2; ++Index)
        Spec.Entries.push_back({"lib/libfoo.so#" + std::to_string(Index), Arch,
                                content(Arch, Index)});
      Dir.write(std::string(".kpack/foo_") + Arch + ".kpack",
                buildArchive(Spec));
    }
    Binary = Dir.write("lib/libfoo.so", Bytes{0x7f, 'E', 'L', 'F'});
    Metadata = hipkMetadata("lib/libfoo.so", {"../.kpack/foo_@GFXARCH@.kpack"});
  }
  void TearDown() override { clearLoaderEnvironment(); }
  static void clearLoaderEnvironment() {
    for (const char *Var : kpack::KpackEnvironmentVariables)
      unsetenv(Var);
  }

  static Bytes content(const std::string &Arch, int Index) {
    return payload("co:" + Arch + "#" + std::to_string(Index), 700 + Index);
  }

  /// Creates a cache from the current environment and loads co_index.
  kpack_error_t load(std::vector<const char *> Arches, uint32_t Index,
                     std::string &Out, const Bytes *Meta = nullptr) {
    kpack_cache_t Cache = nullptr;
    EXPECT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
    kpack_error_t Err = loadWith(Cache, Arches, Index, Out, Meta);
    kpack_cache_destroy(Cache);
    return Err;
  }
  kpack_error_t loadWith(kpack_cache_t Cache, std::vector<const char *> Arches,
                         uint32_t Index, std::string &Out,
                         const Bytes *Meta = nullptr) {
    void *Data = nullptr;
    size_t Size = 0;
    kpack_error_t Err = kpack_load_code_object(
        Cache, (Meta ? *Meta : Metadata).data(), Binary.c_str(), Index,
        Arches.data(), Arches.size(), &Data, &Size);
    if (Err == KPACK_SUCCESS)
      Out.assign(static_cast<const char *>(Data), Size);
    kpack_free_code_object(Data);
    return Err;
  }
  static std::string str(const Bytes &B) {
    return std::string(B.begin(), B.end());
  }

  TempDir Dir;
  std::string Binary;
  Bytes Metadata;
};

TEST_F(LoaderTest, FirstRequestedArchWinsAndTripleIsStripped) {
  std::string Out;
  ASSERT_EQ(load({"amdgcn-amd-amdhsa--gfx1101", "gfx1100"}, 1, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx1101", 1)));
}

TEST_F(LoaderTest, FallsBackToLaterArch) {
  std::string Out;
  ASSERT_EQ(load({"gfx942", "gfx11-generic", "gfx1100"}, 0, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx1100", 0)));
}

TEST_F(LoaderTest, ArchNotFoundWhenNoArchiveListsTheArch) {
  Bytes Meta = hipkMetadata("lib/libfoo.so", {"../.kpack/foo_gfx1100.kpack"});
  std::string Out;
  EXPECT_EQ(load({"gfx1101"}, 0, Out, &Meta), KPACK_ERROR_ARCH_NOT_FOUND);
}

TEST_F(LoaderTest, KernelNotFoundWhenListedArchLacksTheKey) {
  Bytes Meta = hipkMetadata("lib/libfoo.so", {"../.kpack/foo_gfx1100.kpack"});
  std::string Out;
  EXPECT_EQ(load({"gfx1100"}, 5, Out, &Meta), KPACK_ERROR_KERNEL_NOT_FOUND);
  // Also when another requested arch is not listed at all.
  EXPECT_EQ(load({"gfx1101", "gfx1100"}, 5, Out, &Meta),
            KPACK_ERROR_KERNEL_NOT_FOUND);
}

TEST_F(LoaderTest, EmptyOrNullArchListIsInvalidArgument) {
  std::string Out;
  EXPECT_EQ(load({}, 0, Out), KPACK_ERROR_INVALID_ARGUMENT);
  kpack_cache_t Cache = nullptr;
  ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  const char *Arch = "gfx1100";
  void *Data = nullptr;
  size_t Size = 0;
  EXPECT_EQ(kpack_load_code_object(Cache, Metadata.data(), Binary.c_str(), 0,
                                   nullptr, 0, &Data, &Size),
            KPACK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kpack_load_code_object(Cache, Metadata.data(), Binary.c_str(), 0,
                                   &Arch, 0, &Data, &Size),
            KPACK_ERROR_INVALID_ARGUMENT);
  // Even with ROCM_KPACK_ARCH_OVERRIDE, as upstream checks arguments first.
  kpack_cache_destroy(Cache);
  setenv("ROCM_KPACK_ARCH_OVERRIDE", "gfx1100", 1);
  EXPECT_EQ(load({}, 0, Out), KPACK_ERROR_INVALID_ARGUMENT);
}

TEST_F(LoaderTest, ArchiveNotFoundWhenNothingOpens) {
  std::string Out;
  EXPECT_EQ(load({"gfx942"}, 0, Out), KPACK_ERROR_ARCHIVE_NOT_FOUND);
  Dir.write("bad.kpack", Bytes{'n', 'o', 'p', 'e'});
  Bytes Meta = hipkMetadata("lib/libfoo.so", {"../bad.kpack"});
  EXPECT_EQ(load({"gfx1100"}, 0, Out, &Meta), KPACK_ERROR_ARCHIVE_NOT_FOUND);
}

TEST_F(LoaderTest, MultiArchArchiveWithAbsolutePath) {
  ArchiveSpec Spec;
  Spec.Entries = {{"lib/libfoo.so#0", "gfx1100", payload("multi-1100", 300)},
                  {"lib/libfoo.so#0", "gfx1101", payload("multi-1101", 300)}};
  std::string Path = Dir.write("all/foo.kpack", buildArchive(Spec));
  Bytes Meta = hipkMetadata("lib/libfoo.so", {Path});
  std::string Out;
  ASSERT_EQ(load({"gfx1101"}, 0, Out, &Meta), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("multi-1101", 300)));
}

TEST_F(LoaderTest, InvalidArgumentsAndMetadata) {
  kpack_cache_t Cache = nullptr;
  ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  const char *Arch = "gfx1100";
  void *Data;
  size_t Size;
  EXPECT_EQ(kpack_load_code_object(Cache, nullptr, Binary.c_str(), 0, &Arch, 1,
                                   &Data, &Size),
            KPACK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kpack_load_code_object(nullptr, Metadata.data(), Binary.c_str(), 0,
                                   &Arch, 1, &Data, &Size),
            KPACK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kpack_load_code_object(Cache, Metadata.data(), Binary.c_str(), 0,
                                   nullptr, 1, &Data, &Size),
            KPACK_ERROR_INVALID_ARGUMENT);
  Bytes Garbage(16, 0xc1);
  EXPECT_EQ(kpack_load_code_object(Cache, Garbage.data(), Binary.c_str(), 0,
                                   &Arch, 1, &Data, &Size),
            KPACK_ERROR_INVALID_METADATA);
  kpack_cache_destroy(Cache);
  EXPECT_EQ(kpack_cache_create(nullptr), KPACK_ERROR_INVALID_ARGUMENT);
}

TEST_F(LoaderTest, OpensEachPathOnceIncludingFailures) {
  Bytes Meta = hipkMetadata("lib/libfoo.so",
                            {"../missing/foo_@GFXARCH@.kpack",
                             "../.kpack/foo_@GFXARCH@.kpack",
                             "../.kpack/../.kpack/foo_@GFXARCH@.kpack"});
  kpack::KpackMetadata Ref;
  ASSERT_FALSE(kpack::decodeKpackMetadata(Meta.data(), Meta.size(), Ref, kpack::MetadataMode::Loader));
  LoaderCache Cache{KpackEnvironment()};
  std::vector<std::string> Arches = {"gfx942", "gfx1101"};
  for (int Registration = 0; Registration < 5; ++Registration) {
    void *Data = nullptr;
    size_t Size = 0;
    ASSERT_FALSE(Cache.loadCodeObject(Ref, Binary, Registration % 2, Arches,
                                      Data, Size));
    std::free(Data);
  }
  kpack::LoaderStats S = Cache.stats();
  // gfx942: three distinct paths probed (all fail); gfx1101: the missing one
  // and the first real one (which hits).
  EXPECT_EQ(S.PathLookups, 5u);
  EXPECT_EQ(S.ArchiveOpens, 1u); // gfx942 archives do not exist
  EXPECT_EQ(S.Loads, 5u);
}

TEST_F(LoaderTest, TwoSpellingsShareOneArchive) {
  kpack::KpackMetadata Ref{"lib/libfoo.so",
                           {"../.kpack/../.kpack/foo_gfx1100.kpack"}};
  kpack::KpackMetadata Other{"lib/libfoo.so", {"../.kpack/foo_gfx1100.kpack"}};
  LoaderCache Cache{KpackEnvironment()};
  for (const kpack::KpackMetadata *R : {&Ref, &Other}) {
    void *Data = nullptr;
    size_t Size = 0;
    ASSERT_FALSE(Cache.loadCodeObject(*R, Binary, 0, {"gfx1100"}, Data, Size));
    std::free(Data);
  }
  EXPECT_EQ(Cache.stats().PathLookups, 2u);
  EXPECT_EQ(Cache.stats().ArchiveOpens, 1u);
}

TEST_F(LoaderTest, EnvPathReplacesEmbeddedPaths) {
  ArchiveSpec Spec;
  Spec.Arches = {"gfx1100"};
  Spec.Entries = {{"lib/libfoo.so#0", "gfx1100", payload("from-env", 64)}};
  std::string Path = Dir.write("env/override.kpack", buildArchive(Spec));
  // ':'-separated (';' on Windows).
  setenv("ROCM_KPACK_PATH",
         ("/nonexistent.kpack" + std::string(1, kpack::platform::PathListSeparator) +
          Path).c_str(),
         1);
  std::string Out;
  ASSERT_EQ(load({"gfx1100"}, 0, Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("from-env", 64)));
  // Embedded paths are not consulted at all.
  EXPECT_EQ(load({"gfx1101"}, 0, Out), KPACK_ERROR_ARCH_NOT_FOUND);
}

TEST_F(LoaderTest, EnvPathPrefixIsSearchedFirst) {
  ArchiveSpec Spec;
  Spec.Entries = {{"lib/libfoo.so#0", "gfx1100", payload("from-prefix", 64)}};
  std::string Path = Dir.write("env/prefix.kpack", buildArchive(Spec));
  setenv("ROCM_KPACK_PATH_PREFIX", Path.c_str(), 1);
  std::string Out;
  ASSERT_EQ(load({"gfx1100"}, 0, Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("from-prefix", 64)));
  // Embedded paths still serve what the prefix lacks.
  ASSERT_EQ(load({"gfx1101"}, 0, Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx1101", 0)));
}

TEST_F(LoaderTest, EnvDisable) {
  std::string Out;
  setenv("ROCM_KPACK_DISABLE", "1", 1);
  EXPECT_EQ(load({"gfx1100"}, 0, Out), KPACK_ERROR_NOT_IMPLEMENTED);
  setenv("ROCM_KPACK_DISABLE", "0", 1); // "0..." means unset
  EXPECT_EQ(load({"gfx1100"}, 0, Out), KPACK_SUCCESS);
  setenv("ROCM_KPACK_DISABLE", "", 1);
  EXPECT_EQ(load({"gfx1100"}, 0, Out), KPACK_SUCCESS);
}

TEST_F(LoaderTest, EnvIsReadOnceAtCacheCreation) {
  kpack_cache_t Cache = nullptr;
  ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  setenv("ROCM_KPACK_DISABLE", "yes", 1);
  std::string Out;
  EXPECT_EQ(loadWith(Cache, {"gfx1100"}, 0, Out), KPACK_SUCCESS);
  kpack_cache_destroy(Cache);
}

TEST_F(LoaderTest, EnvArchOverrideReplacesRequestedList) {
  setenv("ROCM_KPACK_ARCH_OVERRIDE", "gfx942,amdgcn-amd-amdhsa--gfx1101", 1);
  std::string Out;
  ASSERT_EQ(load({"gfx1100"}, 1, Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx1101", 1)));
}

TEST_F(LoaderTest, EnvDebugLogsPathsTargetsAndOfferedArches) {
  setenv("ROCM_KPACK_DEBUG", "1", 1);
  Bytes Meta = hipkMetadata("lib/libfoo.so", {"../.kpack/foo_gfx1100.kpack",
                                              "../none_@GFXARCH@.kpack"});
  std::string Out;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(load({"gfx1101"}, 0, Out, &Meta), KPACK_ERROR_ARCH_NOT_FOUND);
  std::string Log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(Log.find("kpack: requested targets: gfx1101\n"), std::string::npos)
      << Log;
  EXPECT_NE(Log.find("kpack: target gfx1101: candidates gfx1101\n"),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.find("foo_gfx1100.kpack: offers gfx1100\n"), std::string::npos)
      << Log;
  EXPECT_NE(Log.find("foo_gfx1100.kpack: does not list gfx1101; "
                     "archive offers: gfx1100"),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.find("none_gfx1101.kpack: not usable"), std::string::npos)
      << Log;
  EXPECT_NE(Log.find("kpack: failed: no archive lists a requested target"),
            std::string::npos)
      << Log;
}

TEST_F(LoaderTest, QuietWithoutDebug) {
  std::string Out;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(load({"gfx942"}, 0, Out), KPACK_ERROR_ARCHIVE_NOT_FOUND);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(EnumerateArchitectures, VisitsAllAndStopsOnFalse) {
  std::vector<std::string> Seen;
  auto Collect = [](const char *Arch, void *User) {
    static_cast<std::vector<std::string> *>(User)->push_back(Arch);
    return true;
  };
  ASSERT_EQ(kpack_enumerate_architectures(
                upstreamArchive("test_zstd.kpack").c_str(), Collect, &Seen),
            KPACK_SUCCESS);
  EXPECT_EQ(Seen, (std::vector<std::string>{"gfx1100", "gfx1101"}));
  Seen.clear();
  auto First = [](const char *Arch, void *User) {
    static_cast<std::vector<std::string> *>(User)->push_back(Arch);
    return false;
  };
  ASSERT_EQ(kpack_enumerate_architectures(
                upstreamArchive("test_noop.kpack").c_str(), First, &Seen),
            KPACK_SUCCESS);
  EXPECT_EQ(Seen, (std::vector<std::string>{"gfx900"}));
  EXPECT_EQ(kpack_enumerate_architectures("/nonexistent.kpack", Collect, &Seen),
            KPACK_ERROR_FILE_NOT_FOUND);
  EXPECT_EQ(kpack_enumerate_architectures(nullptr, Collect, &Seen),
            KPACK_ERROR_INVALID_ARGUMENT);
}

} // namespace
