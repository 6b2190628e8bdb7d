//===- BundleKeysTest.cpp - kpack/BundleKeys.h ----------------------------===//
//
// The cases are rocm_bootstrap's tables and upstream's wheel-splitter tests
// (FORMAT.md §6), as data.
//
//===----------------------------------------------------------------------===//

#include "kpack/BundleKeys.h"

#include <gtest/gtest.h>

using namespace kpack;

namespace {

std::vector<std::string> chainKeys(const char *Target) {
  std::vector<std::string> Keys;
  for (const PackagingBundle &B : packagingChain(Target))
    Keys.push_back(B.Key);
  return Keys;
}

TEST(BundleKeys, PackagingChains) {
  using V = std::vector<std::string>;
  EXPECT_EQ(chainKeys("gfx1151"), (V{"gfx1151", "gfx11_5", "gfx11"}));
  EXPECT_EQ(chainKeys("gfx942"), (V{"gfx942", "gfx9_4", "gfx9"}));
  EXPECT_EQ(chainKeys("gfx90a"), (V{"gfx90a", "gfx9_0", "gfx9"}));
  EXPECT_EQ(chainKeys("gfx950"), (V{"gfx950", "gfx9_5", "gfx9"}));
  EXPECT_EQ(chainKeys("gfx1100"), (V{"gfx1100", "gfx11_0", "gfx11"}));
  EXPECT_EQ(chainKeys("gfx1201"), (V{"gfx1201", "gfx12_0", "gfx12"}));
  EXPECT_EQ(chainKeys("gfx1250"), (V{"gfx1250", "gfx12_5", "gfx12"}));
  EXPECT_EQ(chainKeys("gfx1031"), (V{"gfx1031", "gfx10_3", "gfx10"}));
  EXPECT_EQ(chainKeys("gfx1012"), (V{"gfx1012", "gfx10_1", "gfx10"}));
  // Not targets: families, sub-families, generic processors, unknowns.
  EXPECT_TRUE(chainKeys("gfx11").empty());
  EXPECT_TRUE(chainKeys("gfx9_4").empty());
  EXPECT_TRUE(chainKeys("gfx11-generic").empty());
  EXPECT_TRUE(chainKeys("gfx1300").empty());
}

TEST(BundleKeys, SubFamilyMembers) {
  const struct {
    const char *SubFamily;
    std::vector<const char *> Members;
  } Cases[] = {
      {"gfx9_0",
       {"gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a",
        "gfx90c"}},
      {"gfx9_4", {"gfx942"}},
      {"gfx9_5", {"gfx950"}},
      {"gfx10_1", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
      {"gfx10_3",
       {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035",
        "gfx1036"}},
      {"gfx11_0", {"gfx1100", "gfx1101", "gfx1102", "gfx1103"}},
      {"gfx11_5", {"gfx1150", "gfx1151", "gfx1152", "gfx1153"}},
      {"gfx12_0", {"gfx1200", "gfx1201"}},
      {"gfx12_5", {"gfx1250", "gfx1251"}},
  };
  for (const auto &C : Cases)
    for (const char *M : C.Members) {
      std::vector<PackagingBundle> Chain = packagingChain(M);
      ASSERT_EQ(Chain.size(), 3u) << M;
      EXPECT_EQ(Chain[1].Key, C.SubFamily) << M;
      EXPECT_EQ(Chain[1].Level, BundleLevel::SubFamily) << M;
      EXPECT_EQ(Chain[2].Level, BundleLevel::Family) << M;
      EXPECT_EQ(Chain[0].Level, BundleLevel::Target) << M;
    }
}

TEST(BundleKeys, DisplayNames) {
  const std::pair<const char *, const char *> Cases[] = {
      {"gfx9_0", "Vega"},    {"gfx9_4", "MI300"},   {"gfx9_5", "MI350"},
      {"gfx10_1", "RDNA1"},  {"gfx10_3", "RDNA2"},  {"gfx11_0", "RDNA3"},
      {"gfx11_5", "RDNA3.5"}, {"gfx12_0", "RDNA4"}, {"gfx12_5", "GFX12.5"},
      {"gfx9", "GFX9"},      {"gfx10", "GFX10"},    {"gfx11", "RDNA3"},
      {"gfx12", "RDNA4"},    {"gfx942", "gfx942"},  {"gfx1151", "gfx1151"},
  };
  for (const auto &[Key, Display] : Cases) {
    std::optional<PackagingBundle> B = lookupBundle(Key);
    ASSERT_TRUE(B) << Key;
    EXPECT_EQ(B->DisplayName, Display) << Key;
  }
  EXPECT_FALSE(lookupBundle("gfx110x"));
  EXPECT_FALSE(lookupBundle("gfx13"));
}

TEST(BundleKeys, BundleKeyFor) {
  const std::pair<const char *, const char *> Cases[] = {
      // upstream's _arch_to_bundle_key cases
      {"gfx942", "gfx942"},
      {"gfx942:xnack+", "gfx942"},
      {"gfx90a:xnack-", "gfx90a"},
      {"gfx1100", "gfx1100"},
      {"gfx11", "gfx11"},
      {"gfx12_0", "gfx12_0"},
      // Tensile's spelling of features, both features
      {"gfx90a-xnack+", "gfx90a"},
      {"gfx942:sramecc+:xnack-", "gfx942"},
      // AOTriton's family directories (upstream's _BUNDLE_MAP and the rule)
      {"gfx11xx", "gfx11"},
      {"gfx120x", "gfx12_0"},
      {"gfx110x", "gfx11_0"},
      {"gfx115x", "gfx11_5"},
      {"gfx9xx", "gfx9"},
      {"gfx94x", "gfx9_4"},
      // LLVM generic processors: the bundle they cover
      {"gfx11-generic", "gfx11"},
      {"gfx9-4-generic", "gfx9_4"},
      {"gfx9-generic", "gfx9_0"},
      {"gfx10-3-generic", "gfx10_3"},
      {"gfx12-generic", "gfx12_0"},
      {"gfx12-5-generic", "gfx12_5"},
  };
  for (const auto &[Target, Key] : Cases) {
    std::optional<std::string> K = bundleKeyFor(Target);
    ASSERT_TRUE(K) << Target;
    EXPECT_EQ(*K, Key) << Target;
  }
  for (const char *Unknown : {"gfx1300", "gfx13xx", "gfx119x", "gfx", "sm_90",
                              "", "gfx10-1-genericx"})
    EXPECT_FALSE(bundleKeyFor(Unknown)) << Unknown;
}

TEST(BundleKeys, AotritonFamilyDirectories) {
  EXPECT_EQ(aotritonFamilyBundle("lib/aotriton.images/amd-gfx11xx/flash/a.aks2"),
            "gfx11");
  EXPECT_EQ(aotritonFamilyBundle("lib/aotriton.images/amd-gfx120x/flash/a.aks2"),
            "gfx12_0");
  // Target directories are the database handler's.
  EXPECT_FALSE(
      aotritonFamilyBundle("lib/aotriton.images/amd-gfx942/flash/a.aks2"));
  EXPECT_FALSE(aotritonFamilyBundle("lib/other/amd-gfx11xx/flash/a.aks2"));
  EXPECT_FALSE(aotritonFamilyBundle("lib/aotriton.images/amd-gfx11xx"));
  EXPECT_FALSE(aotritonFamilyBundle("lib/aotriton.images/gfx11xx/a.aks2"));
}

TEST(BundleKeys, DeviceDistNames) {
  // upstream's _bundle_key_to_dist_name cases
  const std::pair<const char *, const char *> Cases[] = {
      {"gfx942", "amd-torch-device-gfx942"},
      {"gfx11", "amd-torch-device-gfx11"},
      {"gfx12_0", "amd-torch-device-gfx12-0"},
      {"gfx900", "amd-torch-device-gfx900"},
      {"gfx90a", "amd-torch-device-gfx90a"},
      {"gfx1100", "amd-torch-device-gfx1100"},
      {"gfx1151", "amd-torch-device-gfx1151"},
      {"gfx9", "amd-torch-device-gfx9"},
      {"gfx9_4", "amd-torch-device-gfx9-4"},
  };
  for (const auto &[Key, Dist] : Cases)
    EXPECT_EQ(deviceDistName("amd-torch-device", Key), Dist);
  // The prefix is kept as given.
  EXPECT_EQ(deviceDistName("my_prefix", "gfx11_5"), "my_prefix-gfx11-5");
}

} // namespace
