//===- LoaderContractTest.cpp - kpack_load_code_object per FORMAT.md §1.4 -===//
//
// Each rule of the arch-list contract CLR relies on, through the C API:
// triple stripping, feature-subset expansion (for @GFXARCH@ and for the
// archives' gfx_arches), fall-through past an archive that lacks the key,
// and the three final error codes.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/SearchPaths.h"
#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace kpack_test;

namespace {

class LoaderContractTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *Var : kpack::KpackEnvironmentVariables)
      unsetenv(Var);
    Binary = Dir.write("lib/libblas.so", Bytes{0x7f, 'E', 'L', 'F'});
  }

  /// Writes <root>/<Name> offering Arches, with Key's code object for each
  /// arch in WithKey ("co:<arch>").
  void archive(const std::string &Name, std::vector<std::string> Arches,
               std::vector<std::string> WithKey,
               const std::string &Key = "lib/libblas.so#0") {
    ArchiveSpec Spec;
    Spec.Family = Arches.front();
    Spec.Arches = std::move(Arches);
    for (const std::string &A : WithKey)
      Spec.Entries.push_back({Key, A, content(A)});
    // Some other key, so that an archive without Key is still well formed.
    Spec.Entries.push_back({"lib/other.so#0", Spec.Arches.front(),
                            payload("other", 16)});
    Dir.write(Name, buildArchive(Spec));
  }
  static Bytes content(const std::string &Arch) {
    return payload("co:" + Arch, 256);
  }
  static std::string str(const Bytes &B) {
    return std::string(B.begin(), B.end());
  }

  kpack_error_t load(const std::vector<std::string> &SearchPaths,
                     std::vector<const char *> Arches, std::string &Out) {
    Bytes Meta = hipkMetadata("lib/libblas.so", SearchPaths);
    kpack_cache_t Cache = nullptr;
    EXPECT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
    void *Data = nullptr;
    size_t Size = 0;
    kpack_error_t Err =
        kpack_load_code_object(Cache, Meta.data(), Binary.c_str(), 0,
                               Arches.data(), Arches.size(), &Data, &Size);
    if (Err == KPACK_SUCCESS)
      Out.assign(static_cast<const char *>(Data), Size);
    kpack_free_code_object(Data);
    kpack_cache_destroy(Cache);
    return Err;
  }

  TempDir Dir;
  std::string Binary;
};

// TheRock's layout: one archive per target, named by the bare processor.
// CLR passes the full ISA name; the library strips the triple and reaches
// "gfx942" through the subsets, both in the path and in gfx_arches.
TEST_F(LoaderContractTest, FullIsaNameFindsTheRocksPerArchArchive) {
  archive(".kpack/blas_lib_gfx942.kpack", {"gfx942"}, {"gfx942"});
  std::string Out;
  ASSERT_EQ(load({"../.kpack/blas_lib_@GFXARCH@.kpack"},
                 {"amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
                  "amdgcn-amd-amdhsa--gfx9-4-generic:sramecc+:xnack-"},
                 Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx942")));
}

TEST_F(LoaderContractTest, XnackOnGpuFindsArchiveBuiltForBareProcessor) {
  archive("all.kpack", {"gfx900", "gfx1100"}, {"gfx900", "gfx1100"});
  std::string Out;
  ASSERT_EQ(load({"../all.kpack"}, {"gfx900:xnack+"}, Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx900")));
}

// Subsets are tried most specific first: gfx942:sramecc+ before
// gfx942:xnack- before gfx942, whatever the archive's order.
TEST_F(LoaderContractTest, MostSpecificSubsetWinsInArchiveArches) {
  archive("all.kpack", {"gfx942", "gfx942:xnack-", "gfx942:sramecc+"},
          {"gfx942", "gfx942:xnack-", "gfx942:sramecc+"});
  std::string Out;
  ASSERT_EQ(load({"../all.kpack"}, {"gfx942:sramecc+:xnack-"}, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx942:sramecc+")));
  archive("all.kpack", {"gfx942", "gfx942:xnack-"}, {"gfx942", "gfx942:xnack-"});
  ASSERT_EQ(load({"../all.kpack"}, {"gfx942:sramecc+:xnack-"}, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx942:xnack-")));
}

// @GFXARCH@ is expanded with each subset in the same order.
TEST_F(LoaderContractTest, MostSpecificSubsetWinsInGfxArchPaths) {
  archive("kp/x_gfx942:xnack-.kpack", {"gfx942:xnack-"}, {"gfx942:xnack-"});
  archive("kp/x_gfx942.kpack", {"gfx942"}, {"gfx942"});
  std::string Out;
  ASSERT_EQ(load({"../kp/x_@GFXARCH@.kpack"}, {"gfx942:sramecc-:xnack-"}, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx942:xnack-")));
  ASSERT_EQ(load({"../kp/x_@GFXARCH@.kpack"}, {"gfx942:xnack+"}, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx942")));
}

// The caller's order comes first: a later entry is tried only when no
// subset of an earlier one is found. No generic is derived by the library.
TEST_F(LoaderContractTest, CallerOrderFirstAndNoGenericDerivation) {
  archive("all.kpack", {"gfx9-4-generic", "gfx942"}, {"gfx9-4-generic", "gfx942"});
  std::string Out;
  ASSERT_EQ(load({"../all.kpack"}, {"gfx9-4-generic", "gfx942"}, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx9-4-generic")));
  archive("all.kpack", {"gfx9-4-generic"}, {"gfx9-4-generic"});
  EXPECT_EQ(load({"../all.kpack"}, {"gfx942:sramecc+"}, Out),
            KPACK_ERROR_ARCH_NOT_FOUND);
}

// An archive that lists the arch but lacks the key does not end the search.
TEST_F(LoaderContractTest, FallsThroughToNextArchiveWhenKeyIsMissing) {
  archive("a.kpack", {"gfx1100"}, {});
  archive("b.kpack", {"gfx1100"}, {"gfx1100"});
  std::string Out;
  ASSERT_EQ(load({"../a.kpack", "../b.kpack"}, {"gfx1100"}, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx1100")));
}

// ... nor does it stop the less specific candidates.
TEST_F(LoaderContractTest, FallsThroughToLessSpecificCandidate) {
  archive("kp/x_gfx90a:xnack+.kpack", {"gfx90a:xnack+"}, {});
  archive("kp/x_gfx90a.kpack", {"gfx90a"}, {"gfx90a"});
  std::string Out;
  ASSERT_EQ(load({"../kp/x_@GFXARCH@.kpack"}, {"gfx90a:xnack+"}, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx90a")));
}

TEST_F(LoaderContractTest, KernelNotFoundWhenListedButKeyMissingEverywhere) {
  archive("a.kpack", {"gfx1100"}, {});
  archive("b.kpack", {"gfx1101"}, {"gfx1101"});
  std::string Out;
  EXPECT_EQ(load({"../a.kpack", "../b.kpack", "../missing.kpack"},
                 {"gfx1100"}, Out),
            KPACK_ERROR_KERNEL_NOT_FOUND);
}

TEST_F(LoaderContractTest, ArchNotFoundWhenArchivesOpenButListNoCandidate) {
  archive("a.kpack", {"gfx1100"}, {"gfx1100"});
  std::string Out;
  EXPECT_EQ(load({"../a.kpack", "../missing.kpack"}, {"gfx942:xnack-"}, Out),
            KPACK_ERROR_ARCH_NOT_FOUND);
}

TEST_F(LoaderContractTest, ArchiveNotFoundWhenNoneOpens) {
  Dir.write("corrupt.kpack", Bytes{'K', 'P', 'A', 'K'});
  std::string Out;
  EXPECT_EQ(load({"../missing_@GFXARCH@.kpack", "../corrupt.kpack"},
                 {"gfx942:sramecc+:xnack-"}, Out),
            KPACK_ERROR_ARCHIVE_NOT_FOUND);
}

// Only the first @GFXARCH@ is replaced, as upstream does.
TEST_F(LoaderContractTest, OnlyFirstPlaceholderIsReplaced) {
  archive("gfx1100/x_@GFXARCH@.kpack", {"gfx1100"}, {"gfx1100"});
  std::string Out;
  ASSERT_EQ(load({"../@GFXARCH@/x_@GFXARCH@.kpack"}, {"gfx1100"}, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(content("gfx1100")));
}

} // namespace
