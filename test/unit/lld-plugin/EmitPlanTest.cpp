//===- EmitPlanTest.cpp - ld.kpack names and search paths -----------------===//

#include "Finalize.h"
#include "kpack/ArchivePaths.h"

#include "gtest/gtest.h"

using namespace kpack::link;

namespace {

EmitPlan planOk(const KpackOptions &O, llvm::StringRef Output) {
  auto P = planEmission(O, Output);
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  return std::move(*P);
}

TEST(EmitPlan, SingleArchiveRelativeToTheOutput) {
  KpackOptions O;
  O.OutputArchive = "/pkg/share/kpack/libfoo.kpack";
  EmitPlan P = planOk(O, "/pkg/lib/libfoo.so.1");
  EXPECT_EQ(P.KernelName, "libfoo.so.1");
  EXPECT_EQ(P.SearchPaths,
            (std::vector<std::string>{"../share/kpack/libfoo.kpack"}));
}

TEST(EmitPlan, PerTargetPattern) {
  KpackOptions O;
  O.OutputDir = "/pkg/lib/.kpack";
  O.KernelName = "blas";
  EmitPlan P = planOk(O, "/pkg/lib/libblas.so");
  EXPECT_EQ(P.KernelName, "blas");
  EXPECT_EQ(P.SearchPaths,
            (std::vector<std::string>{".kpack/blas_@GFXARCH@.kpack"}));
  EXPECT_EQ(kpack::perTargetArchiveName("blas", "gfx942:sramecc+:xnack-"),
            "blas_gfx942:sramecc+:xnack-.kpack");
}

TEST(EmitPlan, ArchiveBesideTheOutput) {
  KpackOptions O;
  O.OutputDir = "/a/b";
  EXPECT_EQ(planOk(O, "/a/b/app").SearchPaths,
            (std::vector<std::string>{"app_@GFXARCH@.kpack"}));
}

TEST(EmitPlan, ExplicitSearchPathsWin) {
  KpackOptions O;
  O.OutputArchive = "/x/y.kpack";
  O.SearchPaths = {"/abs/y.kpack", "rel/@GFXARCH@.kpack"};
  EXPECT_EQ(planOk(O, "/x/bin/app").SearchPaths, O.SearchPaths);
}

// --kpack-compression-level goes through the one check of every writer; 0
// keeps its meaning here (no compression).
TEST(EmitPlan, CompressionLevel) {
  KpackOptions O;
  O.OutputArchive = "/x/y.kpack";
  EXPECT_EQ(planOk(O, "/x/app").Compression.Scheme,
            kpack::ArchiveCompression::ZstdPerKernel);
  EXPECT_EQ(planOk(O, "/x/app").Compression.Level, 3);
  O.CompressionLevel = 0;
  EXPECT_EQ(planOk(O, "/x/app").Compression.Scheme,
            kpack::ArchiveCompression::None);
  O.CompressionLevel = 19;
  EXPECT_EQ(planOk(O, "/x/app").Compression.Level, 19);
  O.CompressionLevel = 23;
  auto P = planEmission(O, "/x/app");
  ASSERT_FALSE(bool(P));
  EXPECT_EQ(llvm::toString(P.takeError()),
            "invalid --kpack-compression-level '23' (0 for none): zstd level "
            "23 is not in 1..22");
}

// --kpack-compression names the scheme as every writer's --compression does;
// the level is then that scheme's.
TEST(EmitPlan, CompressionScheme) {
  KpackOptions O;
  O.OutputArchive = "/x/y.kpack";
  O.Compression = "zstd-shared";
  EXPECT_EQ(planOk(O, "/x/app").Compression.Scheme,
            kpack::ArchiveCompression::ZstdSharedSegments);
  EXPECT_EQ(planOk(O, "/x/app").Compression.Level, 9);
  O.Compression = "zstd-long";
  O.CompressionLevel = 22;
  EXPECT_EQ(planOk(O, "/x/app").Compression.Scheme,
            kpack::ArchiveCompression::ZstdPerKernelLong);
  EXPECT_EQ(planOk(O, "/x/app").Compression.Level, 22);
  O.Compression = "lz4";
  auto P = planEmission(O, "/x/app");
  ASSERT_FALSE(bool(P));
  EXPECT_EQ(llvm::toString(P.takeError()),
            "invalid --kpack-compression 'lz4': unknown compression 'lz4' "
            "(expected one of none, zstd, zstd-long, zstd-shared)");
}

TEST(EmitPlan, ArchiveMustNotBeTheOutput) {
  KpackOptions O;
  O.OutputArchive = "/x/app";
  auto P = planEmission(O, "/x/app");
  ASSERT_FALSE(bool(P));
  EXPECT_NE(llvm::toString(P.takeError()).find("names the linker output"),
            std::string::npos);
}

} // namespace
