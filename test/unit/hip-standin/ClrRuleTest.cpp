//===- ClrRuleTest.cpp - The stand-in's model of CLR's selection rule -----===//
//
// Table-driven: agents x bundle entries -> the entry CLR loads for each
// agent, or none. The expectations follow CLR and comgr as they are (see
// docs/testing.md), including where that differs from the project's
// target-ID rule (first compatible entry, not the most specific one; one
// uncompressed entry per query; CLR's own generic map).
//
//===----------------------------------------------------------------------===//

#include "ClrRule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace hipstandin;

namespace {

/// "gfx1100" -> "hipv4-amdgcn-amd-amdhsa--gfx1100"; full IDs stay as given.
std::string entryId(const std::string &S) {
  return S.compare(0, 3, "gfx") == 0 ? "hipv4-amdgcn-amd-amdhsa--" + S : S;
}

struct Case {
  std::vector<std::string> Agents;  ///< target IDs
  std::vector<std::string> Entries; ///< bundle entries, in bundle order
  bool Compressed;
  std::vector<std::string> Expected; ///< per agent: entry given, or "none"
};

std::string describe(const Case &C) {
  std::string S = "agents";
  for (const std::string &A : C.Agents)
    S += " " + A;
  S += ", entries";
  for (const std::string &E : C.Entries)
    S += " " + E;
  return S + (C.Compressed ? " (compressed)" : " (uncompressed)");
}

const Case Cases[] = {
    // Exact processor.
    {{"gfx1100"}, {"gfx1100"}, false, {"gfx1100"}},
    // No native code object: the generic one.
    {{"gfx1101"}, {"gfx1100", "gfx11-generic"}, false, {"gfx11-generic"}},
    {{"gfx1151"}, {"gfx11-generic"}, true, {"gfx11-generic"}},
    // Native code beats generic code whatever the bundle order.
    {{"gfx1100"}, {"gfx11-generic", "gfx1100"}, false, {"gfx1100"}},
    {{"gfx1100"}, {"gfx11-generic", "gfx1100"}, true, {"gfx1100"}},
    // A feature the code object leaves unspecified matches either setting.
    {{"gfx90a:xnack+"}, {"gfx90a"}, false, {"gfx90a"}},
    {{"gfx90a:sramecc-:xnack-"}, {"gfx90a"}, false, {"gfx90a"}},
    // A specified feature must equal the agent's.
    {{"gfx90a:xnack-"}, {"gfx90a:xnack+"}, false, {"none"}},
    {{"gfx90a:xnack-"}, {"gfx90a:xnack+"}, true, {"none"}},
    // ... and an agent that does not state the feature matches only code
    // objects that leave it unspecified.
    {{"gfx90a"}, {"gfx90a:xnack+"}, false, {"none"}},
    // Several compatible entries: the first in bundle order, not the most
    // specific one.
    {{"gfx90a:sramecc-:xnack+"},
     {"gfx90a", "gfx90a:xnack+"},
     false,
     {"gfx90a"}},
    {{"gfx90a:sramecc-:xnack+"},
     {"gfx90a:xnack+", "gfx90a"},
     false,
     {"gfx90a:xnack+"}},
    {{"gfx90a:sramecc-:xnack+"}, {"gfx90a", "gfx90a:xnack+"}, true, {"gfx90a"}},
    // CLR's generic map has no entry for gfx908, gfx90a, gfx1250.
    {{"gfx908:xnack-"}, {"gfx9-generic"}, false, {"none"}},
    {{"gfx90a:xnack+"}, {"gfx9-generic:xnack+"}, false, {"none"}},
    {{"gfx1250"}, {"gfx12-generic"}, false, {"none"}},
    // The generic name keeps the agent's features.
    {{"gfx906:xnack-"},
     {"gfx9-generic:xnack-"},
     false,
     {"gfx9-generic:xnack-"}},
    {{"gfx942:sramecc+:xnack-"},
     {"gfx9-4-generic:sramecc+"},
     false,
     {"gfx9-4-generic:sramecc+"}},
    {{"gfx950:sramecc+:xnack+"}, {"gfx9-4-generic"}, false, {"gfx9-4-generic"}},
    // ... even sramecc, which gfx9-generic does not have: comgr rejects the
    // name "gfx9-generic:sramecc+:xnack-", the bundler (compressed bundles)
    // checks only its format.
    {{"gfx906:sramecc+:xnack-"}, {"gfx9-generic:xnack-"}, false, {"none"}},
    {{"gfx906:sramecc+:xnack-"},
     {"gfx9-generic:xnack-"},
     true,
     {"gfx9-generic:xnack-"}},
    // Only HIP entries count; the environment field is not compared.
    {{"gfx1100"},
     {"host-x86_64-unknown-linux-gnu-", "openmp-amdgcn-amd-amdhsa--gfx1100"},
     false,
     {"none"}},
    {{"gfx1100"},
     {"host-x86_64-unknown-linux-gnu-",
      "hip-amdgcn-amd-amdhsa-unknown-gfx1100"},
     false,
     {"hip-amdgcn-amd-amdhsa-unknown-gfx1100"}},
    // Several agents: each its own code object; the generic one is shared.
    {{"gfx1101", "gfx1100", "gfx1102"},
     {"gfx1100", "gfx11-generic"},
     false,
     {"gfx11-generic", "gfx1100", "gfx11-generic"}},
    // comgr's lookup gives an uncompressed entry to one query only: of two
    // agents that differ in xnack, the first in sorted order ('+' < '-')
    // gets the shared gfx90a code object, the other nothing. The unbundle
    // action used for compressed bundles gives it to both.
    {{"gfx90a:xnack-", "gfx90a:xnack+"}, {"gfx90a"}, false, {"none", "gfx90a"}},
    {{"gfx90a:xnack-", "gfx90a:xnack+"},
     {"gfx90a"},
     true,
     {"gfx90a", "gfx90a"}},
    {{"gfx90a:xnack-", "gfx90a:xnack+"},
     {"gfx90a:xnack+", "gfx90a:xnack-"},
     false,
     {"gfx90a:xnack-", "gfx90a:xnack+"}},
};

TEST(StandinClrRule, Selection) {
  for (const Case &C : Cases) {
    std::vector<std::string> Entries, Agents;
    for (const std::string &E : C.Entries)
      Entries.push_back(entryId(E));
    for (const std::string &A : C.Agents) {
      std::optional<std::string> Isa = clr::agentIsaName(A);
      ASSERT_TRUE(Isa) << A;
      Agents.push_back(*Isa);
    }
    std::vector<clr::Choice> Got =
        clr::selectCodeObjects(Entries, Agents, C.Compressed);
    ASSERT_EQ(Got.size(), C.Agents.size());
    for (size_t I = 0; I < Got.size(); ++I) {
      std::string Chosen = Got[I].Entry < 0 ? "none" : C.Entries[Got[I].Entry];
      EXPECT_EQ(Chosen, C.Expected[I])
          << describe(C) << ": agent " << C.Agents[I];
      bool ExpectGeneric = C.Expected[I].find("generic") != std::string::npos;
      EXPECT_EQ(Got[I].Generic, ExpectGeneric)
          << describe(C) << ": agent " << C.Agents[I];
    }
  }
}

TEST(StandinClrRule, AgentIsaNames) {
  EXPECT_EQ(clr::agentIsaName("gfx1100"), "amdgcn-amd-amdhsa--gfx1100");
  EXPECT_EQ(clr::agentIsaName("gfx90a:xnack+:sramecc-"),
            "amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+");
  EXPECT_EQ(clr::agentIsaName("amdgcn-amd-amdhsa--gfx942:sramecc+"),
            "amdgcn-amd-amdhsa--gfx942:sramecc+");
  for (const char *Bad :
       {"", "gfx1100:xnack+", "gfx90a:xnack+:xnack-", "gfx90a:xnack",
        "gfx90a:tgsplit+", "gfx940", "gfx941", "gfx9999", "sm_90",
        "gfx11-generic:xnack+", "gfx90a:"})
    EXPECT_EQ(clr::agentIsaName(Bad), std::nullopt) << Bad;
}

TEST(StandinClrRule, TargetToGeneric) {
  EXPECT_EQ(clr::targetToGeneric("amdgcn-amd-amdhsa--gfx1103"),
            "amdgcn-amd-amdhsa--gfx11-generic");
  EXPECT_EQ(clr::targetToGeneric("amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-"),
            "amdgcn-amd-amdhsa--gfx9-generic:sramecc+:xnack-");
  EXPECT_EQ(clr::targetToGeneric("amdgcn-amd-amdhsa--gfx90a:xnack+"), "");
  EXPECT_EQ(clr::targetToGeneric("amdgcn-amd-amdhsa--gfx1201"),
            "amdgcn-amd-amdhsa--gfx12-generic");
}

TEST(StandinClrRule, KpackArchList) {
  EXPECT_EQ(clr::kpackArchList("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"),
            (std::vector<std::string>{
                "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
                "amdgcn-amd-amdhsa--gfx9-4-generic:sramecc+:xnack-"}));
  EXPECT_EQ(clr::kpackArchList("amdgcn-amd-amdhsa--gfx90a:xnack+"),
            (std::vector<std::string>{"amdgcn-amd-amdhsa--gfx90a:xnack+"}));
}

TEST(StandinClrRule, Compatibility) {
  const std::string P = clr::IsaPrefix;
  EXPECT_TRUE(clr::comgrIsCompatible(P + "gfx942:sramecc+:xnack-",
                                     P + "gfx942:sramecc+"));
  EXPECT_FALSE(clr::comgrIsCompatible(P + "gfx942:sramecc+:xnack-",
                                      P + "gfx942:xnack+"));
  EXPECT_FALSE(clr::comgrIsCompatible(P + "gfx1100", P + "gfx1101"));
  // Identical strings are compatible even when comgr cannot parse them.
  EXPECT_TRUE(clr::comgrIsCompatible("weird", "weird"));
  EXPECT_FALSE(clr::comgrIsCompatible(P + "gfx1100", "gfx1100"));
  EXPECT_TRUE(clr::bundlerIsCompatible(P + "gfx9-generic:sramecc+:xnack-",
                                       P + "gfx9-generic:xnack-"));
  EXPECT_FALSE(clr::comgrIsCompatible(P + "gfx9-generic:sramecc+:xnack-",
                                      P + "gfx9-generic:xnack-"));
}

} // namespace
