//===- VerifyArtifactsTest.cpp - kpack::targetsInName and the report ------===//
//
// The target tokens verify-artifacts reads from file names (colon and
// Tensile's hyphen feature forms, generic processors), and the checks on
// artifact sets built here without device code (the device-code cases are
// lit tests: test/lit/verify-artifacts).
//
//===----------------------------------------------------------------------===//

#include "kpack/VerifyArtifacts.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace kpack;

namespace {

using Tokens = std::vector<std::pair<std::string, char>>;

TEST(TargetsInName, ColonAndHyphenFeatures) {
  EXPECT_EQ(targetsInName("TensileLibrary_lazy_gfx90a:xnack+.dat"),
            (Tokens{{"gfx90a", '+'}}));
  EXPECT_EQ(targetsInName("TensileLibrary_lazy_gfx90a-xnack-.hsaco"),
            (Tokens{{"gfx90a", '-'}}));
  EXPECT_EQ(targetsInName("Kernels.so-000-gfx942:sramecc+:xnack-.hsaco"),
            (Tokens{{"gfx942", '-'}}));
  EXPECT_EQ(targetsInName("Kernels.so-000-gfx942.hsaco"),
            (Tokens{{"gfx942", 0}}));
}

TEST(TargetsInName, GenericProcessorsAndSeveralTokens) {
  EXPECT_EQ(targetsInName("TensileLibrary_gfx11-generic.co"),
            (Tokens{{"gfx11-generic", 0}}));
  EXPECT_EQ(targetsInName("aotriton/kernels/gfx1100/x_gfx942.hsaco"),
            (Tokens{{"gfx1100", 0}, {"gfx942", 0}}));
}

TEST(TargetsInName, NotATarget) {
  EXPECT_TRUE(targetsInName("README").empty());
  EXPECT_TRUE(targetsInName("libgfx.so").empty());
  EXPECT_TRUE(targetsInName("mygfx90a.dat").empty()); // no token boundary
}

class VerifyArtifactsTree : public ::testing::Test {
protected:
  llvm::SmallString<128> Root;
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("verify-artifacts", Root));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Root); }
  void write(const std::string &Rel, const std::string &Text) {
    std::string Path = (Root + "/" + Rel).str();
    llvm::sys::fs::create_directories(llvm::StringRef(Path).rsplit('/').first);
    std::ofstream(Path) << Text;
  }
  std::string report(bool Verbose = false) {
    llvm::Expected<ArtifactsReport> R = verifyArtifacts(Root);
    if (!R)
      return "error: " + llvm::toString(R.takeError());
    std::string S;
    llvm::raw_string_ostream OS(S);
    printArtifactsReport(*R, OS, Verbose);
    return S;
  }
};

TEST_F(VerifyArtifactsTree, DatabaseOnlySetPasses) {
  write("blas_lib_generic/artifact_manifest.txt", "stage\n");
  write("blas_lib_generic/stage/include/blas.h", "#pragma once\n");
  write("blas_lib_gfx942/artifact_manifest.txt", "stage\n");
  write("blas_lib_gfx942/stage/lib/rocblas/library/TensileLibrary_gfx942.dat", "x");
  llvm::Expected<ArtifactsReport> R = verifyArtifacts(Root);
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(R->problemCount(), 0u) << report();
  EXPECT_EQ(R->Checks.size(), 7u);
}

TEST_F(VerifyArtifactsTree, ForeignFileInTargetArtifact) {
  write("blas_lib_generic/artifact_manifest.txt", "stage\n");
  write("blas_lib_generic/stage/include/blas.h", "#pragma once\n");
  write("blas_lib_gfx942/artifact_manifest.txt", "stage\n");
  write("blas_lib_gfx942/stage/lib/rocblas/library/TensileLibrary_gfx1100.dat", "x");
  llvm::Expected<ArtifactsReport> R = verifyArtifacts(Root);
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_EQ(R->problemCount(), 1u);
  EXPECT_NE(report().find("TensileLibrary_gfx1100.dat: names gfx1100, not gfx942"),
            std::string::npos)
      << report();
}

// Split's routing (docs/split.md): database files of every feature variant
// in the artifact of their base arch, Tensile's gfx11-generic files in
// gfx11's; the artifact of a full target ID holds that target's files only.
TEST_F(VerifyArtifactsTree, BaseArchArtifactTakesEveryVariant) {
  write("blas_lib_generic/artifact_manifest.txt", "stage\n");
  write("blas_lib_generic/stage/include/blas.h", "#pragma once\n");
  write("blas_lib_gfx90a/artifact_manifest.txt", "stage\n");
  write("blas_lib_gfx90a/stage/lib/rocblas/library/TensileLibrary_lazy_gfx90a-xnack+.hsaco", "x");
  write("blas_lib_gfx90a/stage/lib/rocblas/library/TensileLibrary_lazy_gfx90a:xnack-.dat", "x");
  write("blas_lib_gfx90a/stage/lib/rocblas/library/gfx90a/TensileManifest.txt", "x");
  write("blas_lib_gfx942/artifact_manifest.txt", "stage\n");
  write("blas_lib_gfx942/stage/lib/hipblaslt/library/Kernels.so-000-gfx942-sramecc+-xnack-.hsaco", "x");
  write("blas_lib_gfx11/artifact_manifest.txt", "stage\n");
  write("blas_lib_gfx11/stage/lib/rocblas/library/TensileLibrary_gfx11-generic.co", "x");
  llvm::Expected<ArtifactsReport> R = verifyArtifacts(Root);
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(R->problemCount(), 0u) << report();
}

TEST_F(VerifyArtifactsTree, OtherBaseArchOrVariantIsForeign) {
  write("blas_lib_generic/artifact_manifest.txt", "stage\n");
  write("blas_lib_generic/stage/include/blas.h", "#pragma once\n");
  write("blas_lib_gfx90a/artifact_manifest.txt", "stage\n");
  write("blas_lib_gfx90a/stage/lib/rocblas/library/TensileLibrary_lazy_gfx942-xnack+.hsaco", "x");
  write("blas_lib_gfx11/artifact_manifest.txt", "stage\n");
  write("blas_lib_gfx11/stage/lib/rocblas/library/TensileLibrary_gfx1100.co", "x");
  write("blas_lib_gfx90a:xnack+/artifact_manifest.txt", "stage\n");
  write("blas_lib_gfx90a:xnack+/stage/lib/rocblas/library/TensileLibrary_lazy_gfx90a-xnack-.dat", "x");
  llvm::Expected<ArtifactsReport> R = verifyArtifacts(Root);
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_EQ(R->problemCount(), 3u) << report();
  std::string S = report();
  EXPECT_NE(S.find("TensileLibrary_lazy_gfx942-xnack+.hsaco: names gfx942:xnack+, not gfx90a"),
            std::string::npos) << S;
  EXPECT_NE(S.find("TensileLibrary_gfx1100.co: names gfx1100, not gfx11"),
            std::string::npos) << S;
  EXPECT_NE(S.find("TensileLibrary_lazy_gfx90a-xnack-.dat: names gfx90a:xnack-, not gfx90a:xnack+"),
            std::string::npos) << S;
}

TEST_F(VerifyArtifactsTree, MissingDirectoryIsAnError) {
  llvm::Expected<ArtifactsReport> R = verifyArtifacts((Root + "/none").str());
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(llvm::toString(R.takeError()).find("is not a directory"),
            std::string::npos);
}

} // namespace
