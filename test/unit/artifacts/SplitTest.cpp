//===- SplitTest.cpp - kpack split's target filter and batch listing ------===//
//
// --gpu-targets (which code objects and database files a shard keeps) and
// --batch-artifact-parent-dir (which artifacts of a shard directory split).
// The split itself is tested end to end in test/lit/split.
//
//===----------------------------------------------------------------------===//

#include "kpack/Split.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace kpack;

namespace {

bool selected(const char *TargetId, std::vector<std::string> Targets) {
  return gpuTargetSelected(TargetId, Targets);
}

TEST(GpuTargetSelected, EmptyListSelectsAll) {
  EXPECT_TRUE(selected("gfx90a:xnack+", {}));
  EXPECT_TRUE(selected("gfx11-generic", {}));
}

TEST(GpuTargetSelected, ProcessorSelectsItsFeatureVariants) {
  EXPECT_TRUE(selected("gfx942", {"gfx942"}));
  EXPECT_TRUE(selected("gfx90a:xnack+", {"gfx90a"}));
  EXPECT_TRUE(selected("gfx942:sramecc+:xnack-", {"gfx1100", "gfx942"}));
  EXPECT_FALSE(selected("gfx90a", {"gfx942"}));
  EXPECT_FALSE(selected("gfx1101", {"gfx1100"}));
}

// Upstream compares bare names: a listed target's features are dropped too.
TEST(GpuTargetSelected, FeaturesAreDroppedOnBothSides) {
  EXPECT_TRUE(selected("gfx90a:xnack-", {"gfx90a:xnack-"}));
  EXPECT_TRUE(selected("gfx90a", {"gfx90a:xnack-"}));
  EXPECT_TRUE(selected("gfx90a:xnack+", {"gfx90a:xnack-"}));
  EXPECT_TRUE(selected("gfx942:sramecc+:xnack-", {"gfx942:xnack-"}));
  EXPECT_TRUE(selected("gfx942:sramecc-", {"gfx942:sramecc+"}));
  // Tensile's spelling of a database file's bundle key.
  EXPECT_TRUE(selected("gfx90a-xnack+", {"gfx90a"}));
}

// A generic processor is a name of its own: no shard of a sharded build
// lists it, so none emits it twice.
TEST(GpuTargetSelected, GenericProcessorOnlyWhenListed) {
  EXPECT_FALSE(selected("gfx11-generic", {"gfx1100"}));
  EXPECT_FALSE(selected("gfx9-4-generic:xnack-", {"gfx942"}));
  EXPECT_TRUE(selected("gfx11-generic", {"gfx11-generic"}));
  EXPECT_TRUE(selected("gfx9-4-generic:xnack-", {"gfx9-4-generic"}));
}

TEST(GpuTargetSelected, StrictProcessorIsItsOwnTarget) {
  EXPECT_FALSE(selected("gfx1250-strict", {"gfx1250"}));
  EXPECT_FALSE(selected("gfx1250", {"gfx1250-strict"}));
  EXPECT_TRUE(selected("gfx1250-strict:xnack+", {"gfx1250-strict"}));
}

TEST(GpuTargetSelected, OtherNamesSelectNothing) {
  EXPECT_FALSE(selected("gfx942", {"gfx94X-dcgpu"}));
  EXPECT_FALSE(selected("gfx12_0", {"gfx1200"}));
}

class BatchTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> Path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("split-batch", Path));
    Dir = Path.str().str();
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }
  void artifact(const std::string &Name, bool Manifest = true) {
    ASSERT_FALSE(llvm::sys::fs::create_directories(Dir + "/" + Name));
    if (Manifest)
      std::ofstream(Dir + "/" + Name + "/artifact_manifest.txt") << "p\n";
  }
  std::string Dir;
};

TEST_F(BatchTest, TargetSpecificArtifactsInNameOrder) {
  artifact("blas_lib_gfx110X-dgpu");
  artifact("blas_dev_generic");
  artifact("blas_test_gfx110X-dgpu");
  artifact("core_runtime_gfx90a:xnack-");
  artifact("plain");
  artifact("rand_lib_gfx94X", /*Manifest=*/false);
  std::ofstream(Dir + "/a_file_gfx1100") << "not a directory\n";
  std::vector<std::string> Log;
  auto Listed = listBatchArtifacts(
      Dir, [&](const std::string &Line) { Log.push_back(Line); });
  ASSERT_TRUE(bool(Listed)) << llvm::toString(Listed.takeError());
  std::vector<std::string> Got;
  for (const BatchArtifact &A : *Listed)
    Got.push_back(A.Dir.substr(Dir.size() + 1) + " " + A.Component);
  EXPECT_EQ(Got, (std::vector<std::string>{
                     "blas_lib_gfx110X-dgpu blas_lib",
                     "blas_test_gfx110X-dgpu blas_test",
                     "core_runtime_gfx90a:xnack- core_runtime"}));
  EXPECT_EQ(Log, (std::vector<std::string>{
                     "skipping blas_dev_generic: target family is 'generic'",
                     "skipping plain: not <component>_<target family>",
                     "skipping rand_lib_gfx94X: no artifact_manifest.txt"}));
}

TEST_F(BatchTest, EmptyParentIsAnError) {
  auto Listed = listBatchArtifacts(Dir);
  ASSERT_FALSE(bool(Listed));
  EXPECT_NE(llvm::toString(Listed.takeError()).find("no subdirectories"),
            std::string::npos);
}

} // namespace
