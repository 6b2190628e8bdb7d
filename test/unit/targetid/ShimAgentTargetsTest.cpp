//===- ShimAgentTargetsTest.cpp - runtime/shim/AgentTargets.h -------------===//

#include "AgentTargets.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace kpack;
using namespace kpack::shim;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names(const std::vector<TargetId> &Ids) {
  std::vector<std::string> Out;
  for (const TargetId &Id : Ids)
    Out.push_back(Id.str());
  return Out;
}

/// A fabricated sysfs tree in a fresh temporary directory.
class FakeSysfs : public ::testing::Test {
protected:
  void SetUp() override {
    char Template[] = "/tmp/kpack-shim-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(Template), nullptr);
    Root = Template;
    unsetenv("HSA_XNACK");
  }
  void TearDown() override { fs::remove_all(Root); }

  void node(unsigned Index, const std::string &Properties) {
    fs::path Dir =
        fs::path(Root) / "class/kfd/kfd/topology/nodes" / std::to_string(Index);
    fs::create_directories(Dir);
    std::ofstream(Dir / "properties") << Properties;
  }
  void noretry(const std::string &Value) {
    fs::path Dir = fs::path(Root) / "module/amdgpu/parameters";
    fs::create_directories(Dir);
    std::ofstream(Dir / "noretry") << Value << "\n";
  }
  std::vector<std::string> read() {
    std::vector<TargetId> Out;
    Status S = readKfdTopology(Root, Out);
    EXPECT_FALSE(S) << S.message();
    return names(Out);
  }

  std::string Root;
};

using Strings = std::vector<std::string>;

TEST(ShimGfxTargetVersion, Decodes) {
  EXPECT_EQ(processorForGfxTargetVersion(90010), "gfx90a");
  EXPECT_EQ(processorForGfxTargetVersion(90402), "gfx942");
  EXPECT_EQ(processorForGfxTargetVersion(90012), "gfx90c");
  EXPECT_EQ(processorForGfxTargetVersion(100300), "gfx1030");
  EXPECT_EQ(processorForGfxTargetVersion(110001), "gfx1101");
  EXPECT_EQ(processorForGfxTargetVersion(120001), "gfx1201");
  EXPECT_EQ(processorForGfxTargetVersion(80003), "gfx803");
  EXPECT_EQ(processorForGfxTargetVersion(0), "");
  EXPECT_EQ(processorForGfxTargetVersion(91600), ""); // minor beyond one digit
}

TEST(ShimArchOverride, SplitsTargetIds) {
  std::vector<TargetId> Out;
  ASSERT_FALSE(
      parseArchOverride("gfx942:xnack-:sramecc+:gfx1100,gfx90a:xnack+", Out));
  EXPECT_EQ(names(Out),
            (Strings{"gfx942:sramecc+:xnack-", "gfx1100", "gfx90a:xnack+"}));
}

TEST(ShimArchOverride, DropsDuplicatesAndPrefix) {
  std::vector<TargetId> Out;
  ASSERT_FALSE(parseArchOverride("amdgcn-amd-amdhsa--gfx1100, gfx1100", Out));
  EXPECT_EQ(names(Out), (Strings{"gfx1100"}));
}

TEST(ShimArchOverride, RejectsMalformed) {
  for (const char *Bad : {"", ",", "xnack+", "gfx1100:bogus+", "gfx1100:xnack+",
                          "gfx90a:xnack+:xnack-", "gfx1100,gfx90a:bogus-"}) {
    std::vector<TargetId> Out;
    EXPECT_TRUE(bool(parseArchOverride(Bad, Out))) << Bad;
    EXPECT_TRUE(Out.empty()) << Bad; // nothing half-parsed
  }
}

TEST_F(FakeSysfs, NoTopologyMeansNoGpus) { EXPECT_EQ(read(), Strings{}); }

TEST_F(FakeSysfs, SkipsCpuNodesAndOrdersNumerically) {
  node(0, "cpu_cores_count 16\ngfx_target_version 0\n");
  node(10, "gfx_target_version 110001\ncapability 0\n");
  node(2, "simd_count 304\ngfx_target_version 110000\n");
  EXPECT_EQ(read(), (Strings{"gfx1100", "gfx1101"}));
}

TEST_F(FakeSysfs, SrameccFromCapabilityXnackFromNoRetry) {
  noretry("0");
  node(1, "gfx_target_version 90402\ncapability 67108864\n");
  node(2, "gfx_target_version 90010\ncapability 0\n");
  EXPECT_EQ(read(),
            (Strings{"gfx942:sramecc+:xnack+", "gfx90a:sramecc-:xnack+"}));
}

TEST_F(FakeSysfs, XnackOffByDefault) {
  noretry("-1");
  node(1, "gfx_target_version 90010\ncapability 67108864\n");
  EXPECT_EQ(read(), (Strings{"gfx90a:sramecc+:xnack-"}));
}

TEST_F(FakeSysfs, HsaXnackWins) {
  noretry("1");
  setenv("HSA_XNACK", "1", 1);
  node(1, "gfx_target_version 90010\ncapability 0\n");
  EXPECT_EQ(read(), (Strings{"gfx90a:sramecc-:xnack+"}));
  unsetenv("HSA_XNACK");
}

TEST_F(FakeSysfs, FeaturesOnlyWhereTheProcessorHasThem) {
  noretry("0");
  node(1, "gfx_target_version 100300\ncapability 67108864\n");
  node(2, "gfx_target_version 90000\ncapability 67108864\n");
  EXPECT_EQ(read(), (Strings{"gfx1030", "gfx900:xnack+"}));
}

TEST_F(FakeSysfs, IdenticalGpusAppearOnce) {
  node(1, "gfx_target_version 110000\n");
  node(2, "gfx_target_version 110000\n");
  EXPECT_EQ(read(), (Strings{"gfx1100"}));
}

TEST_F(FakeSysfs, BadVersionIsAnError) {
  node(1, "gfx_target_version 12345678\n");
  std::vector<TargetId> Out;
  Status S = readKfdTopology(Root, Out);
  ASSERT_TRUE(bool(S));
  EXPECT_NE(S.message().find("gfx_target_version 12345678"), std::string::npos);
}

} // namespace
