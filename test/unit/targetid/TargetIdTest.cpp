//===- TargetIdTest.cpp - kpack/TargetId.h --------------------------------===//

#include "kpack/TargetId.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kpack;

namespace {

TargetId parse(const std::string &S) {
  std::optional<TargetId> Id = parseTargetId(S);
  EXPECT_TRUE(Id.has_value()) << S;
  return Id.value_or(TargetId());
}

using Strings = std::vector<std::string>;

TEST(TargetIdParse, ProcessorOnly) {
  TargetId Id = parse("gfx1100");
  EXPECT_EQ(Id.Processor, "gfx1100");
  EXPECT_EQ(Id.Sramecc, FeatureState::Any);
  EXPECT_EQ(Id.Xnack, FeatureState::Any);
  EXPECT_EQ(Id.str(), "gfx1100");
}

TEST(TargetIdParse, Features) {
  TargetId Id = parse("gfx942:sramecc+:xnack-");
  EXPECT_EQ(Id.Processor, "gfx942");
  EXPECT_EQ(Id.Sramecc, FeatureState::On);
  EXPECT_EQ(Id.Xnack, FeatureState::Off);
}

TEST(TargetIdParse, PrintsCanonicalOrder) {
  EXPECT_EQ(parse("gfx942:xnack-:sramecc+").str(), "gfx942:sramecc+:xnack-");
  EXPECT_EQ(parse("gfx90a:xnack+").str(), "gfx90a:xnack+");
  EXPECT_EQ(parse("gfx906:sramecc-").str(), "gfx906:sramecc-");
}

TEST(TargetIdParse, StripsTriplePrefix) {
  EXPECT_EQ(parse("amdgcn-amd-amdhsa--gfx90a:xnack-").str(), "gfx90a:xnack-");
  EXPECT_EQ(parse("amdgcn-amd-amdhsa--gfx11-generic").str(), "gfx11-generic");
}

TEST(TargetIdParse, GenericProcessors) {
  EXPECT_EQ(parse("gfx9-4-generic:sramecc+:xnack-").str(),
            "gfx9-4-generic:sramecc+:xnack-");
  EXPECT_EQ(parse("gfx10-1-generic:xnack+").str(), "gfx10-1-generic:xnack+");
}

TEST(TargetIdParse, RejectsMalformed) {
  for (const char *Bad :
       {"", "gfx", "sm_90", "GFX90A", "gfx90a:", "gfx90a:xnack",
        "gfx90a:xnack*", "gfx90a:foo+", "gfx90a:xnack+:xnack-",
        "gfx942:sramecc+:sramecc+", ":xnack+", "gfx90a::xnack+", "gfx9-",
        "amdgcn-amd-amdhsa--", "gfx90a xnack+"})
    EXPECT_FALSE(parseTargetId(Bad).has_value()) << Bad;
}

TEST(TargetIdParse, RejectsFeaturesTheProcessorLacks) {
  // clang++-22 --offload-arch rejects all of these.
  for (const char *Bad : {"gfx1100:xnack+", "gfx803:xnack-", "gfx900:sramecc+",
                          "gfx11-generic:xnack+", "gfx9-generic:sramecc+",
                          "gfx10-3-generic:xnack-"})
    EXPECT_FALSE(parseTargetId(Bad).has_value()) << Bad;
  // A processor the table does not know is taken as written.
  EXPECT_EQ(parse("gfx1310:xnack+").str(), "gfx1310:xnack+");
}

// A strict processor (upstream's gfx1250-strict, test_strict_identity.py) is
// a processor of its own: parsed and printed whole, never folded into its
// base, neither a candidate of the base's agents nor the reverse.
TEST(TargetIdParse, StrictProcessorIsItsOwn) {
  TargetId Id = parse("amdgcn-amd-amdhsa--gfx1250-strict");
  EXPECT_EQ(Id.Processor, "gfx1250-strict");
  EXPECT_EQ(Id.str(), "gfx1250-strict");
  EXPECT_EQ(parse("gfx1250-strict:xnack+").str(), "gfx1250-strict:xnack+");
  EXPECT_EQ(genericProcessorFor("gfx1250-strict"), "");
  EXPECT_FALSE(isCompatible(parse("gfx1250"), parse("gfx1250-strict")));
  EXPECT_FALSE(isCompatible(parse("gfx1250-strict"), parse("gfx1250")));
  EXPECT_EQ(candidateTargetIds(parse("gfx1250-strict")),
            Strings{"gfx1250-strict"});
  EXPECT_EQ(selectTargetId({"gfx1250", "gfx1250-strict"},
                           parse("gfx1250-strict")),
            1);
  EXPECT_EQ(selectTargetId({"gfx1250-strict"}, parse("gfx1250")), -1);
}

TEST(TargetIdGeneric, LLVMTable) {
  for (const char *P :
       {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"})
    EXPECT_EQ(genericProcessorFor(P), "gfx9-generic") << P;
  for (const char *P : {"gfx942", "gfx950"})
    EXPECT_EQ(genericProcessorFor(P), "gfx9-4-generic") << P;
  for (const char *P : {"gfx1010", "gfx1011", "gfx1012", "gfx1013"})
    EXPECT_EQ(genericProcessorFor(P), "gfx10-1-generic") << P;
  for (const char *P : {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034",
                        "gfx1035", "gfx1036"})
    EXPECT_EQ(genericProcessorFor(P), "gfx10-3-generic") << P;
  for (const char *P : {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
                        "gfx1151", "gfx1152", "gfx1153"})
    EXPECT_EQ(genericProcessorFor(P), "gfx11-generic") << P;
  for (const char *P : {"gfx1200", "gfx1201"})
    EXPECT_EQ(genericProcessorFor(P), "gfx12-generic") << P;
}

TEST(TargetIdGeneric, NoGenericProcessor) {
  // LLVM puts gfx908 and gfx90a in no generic family (an issue text claims
  // gfx90a -> gfx9-generic; LLVM's table says otherwise).
  for (const char *P : {"gfx908", "gfx90a", "gfx803", "gfx1250",
                        "gfx11-generic", "gfx1310", ""})
    EXPECT_EQ(genericProcessorFor(P), "") << P;
  EXPECT_TRUE(isGenericProcessor("gfx9-4-generic"));
  EXPECT_FALSE(isGenericProcessor("gfx942"));
}

// processorsServedBy reads the same table backwards: every processor whose
// candidates include the generic processor, and nothing else.
TEST(TargetIdGeneric, ServedBy) {
  EXPECT_EQ(processorsServedBy("gfx11-generic"),
            (Strings{"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
                     "gfx1151", "gfx1152", "gfx1153"}));
  EXPECT_EQ(processorsServedBy("gfx9-generic"),
            (Strings{"gfx900", "gfx902", "gfx904", "gfx906", "gfx909",
                     "gfx90c"}));
  EXPECT_EQ(processorsServedBy("gfx9-4-generic"),
            (Strings{"gfx942", "gfx950"}));
  EXPECT_EQ(processorsServedBy("gfx942"), Strings{"gfx942"});
  EXPECT_EQ(processorsServedBy("gfx1250-strict"), Strings{"gfx1250-strict"});
  EXPECT_EQ(processorsServedBy("gfx12-5-generic"), Strings{});
  for (const char *G : {"gfx9-generic", "gfx9-4-generic", "gfx10-1-generic",
                        "gfx10-3-generic", "gfx11-generic", "gfx12-generic"})
    for (const std::string &P : processorsServedBy(G)) {
      std::vector<std::string> C = candidateTargetIds(parse(P));
      EXPECT_NE(std::find(C.begin(), C.end(), G), C.end()) << G << " " << P;
    }
}

TEST(TargetIdFeatures, Supported) {
  auto F = supportedFeatures("gfx90a");
  ASSERT_TRUE(F);
  EXPECT_TRUE(F->Sramecc);
  EXPECT_TRUE(F->Xnack);
  F = supportedFeatures("gfx1030");
  ASSERT_TRUE(F);
  EXPECT_FALSE(F->Sramecc);
  EXPECT_FALSE(F->Xnack);
  F = supportedFeatures("gfx900");
  ASSERT_TRUE(F);
  EXPECT_FALSE(F->Sramecc);
  EXPECT_TRUE(F->Xnack);
  EXPECT_FALSE(supportedFeatures("gfx1310"));
}

TEST(TargetIdCompatible, CLRRule) {
  TargetId Agent = parse("gfx942:sramecc+:xnack-");
  EXPECT_TRUE(isCompatible(parse("gfx942"), Agent));
  EXPECT_TRUE(isCompatible(parse("gfx942:sramecc+"), Agent));
  EXPECT_TRUE(isCompatible(parse("gfx942:xnack-"), Agent));
  EXPECT_TRUE(isCompatible(parse("gfx942:sramecc+:xnack-"), Agent));
  EXPECT_FALSE(isCompatible(parse("gfx942:xnack+"), Agent));
  EXPECT_FALSE(isCompatible(parse("gfx942:sramecc-"), Agent));
  EXPECT_FALSE(isCompatible(parse("gfx90a"), Agent));
  // The generic processor is a different processor to this rule; candidate
  // lists bring it in.
  EXPECT_FALSE(isCompatible(parse("gfx9-4-generic"), Agent));
}

TEST(TargetIdCandidates, TwoFeatures) {
  EXPECT_EQ(
      candidateTargetIds(parse("gfx942:sramecc+:xnack-")),
      (Strings{"gfx942:sramecc+:xnack-", "gfx942:sramecc+", "gfx942:xnack-",
               "gfx942", "gfx9-4-generic:sramecc+:xnack-",
               "gfx9-4-generic:sramecc+", "gfx9-4-generic:xnack-",
               "gfx9-4-generic"}));
}

TEST(TargetIdCandidates, WithoutGeneric) {
  EXPECT_EQ(candidateTargetIds(parse("gfx942:sramecc+:xnack-"), false),
            (Strings{"gfx942:sramecc+:xnack-", "gfx942:sramecc+",
                     "gfx942:xnack-", "gfx942"}));
}

TEST(TargetIdCandidates, GenericKeepsOnlyItsFeatures) {
  // gfx9-generic takes xnack but not sramecc.
  EXPECT_EQ(
      candidateTargetIds(parse("gfx906:sramecc-:xnack+")),
      (Strings{"gfx906:sramecc-:xnack+", "gfx906:sramecc-", "gfx906:xnack+",
               "gfx906", "gfx9-generic:xnack+", "gfx9-generic"}));
}

TEST(TargetIdCandidates, NoFeatures) {
  EXPECT_EQ(candidateTargetIds(parse("gfx1101")),
            (Strings{"gfx1101", "gfx11-generic"}));
  EXPECT_EQ(candidateTargetIds(parse("gfx90a:xnack+")),
            (Strings{"gfx90a:xnack+", "gfx90a"}));
}

TEST(TargetIdCandidates, OneFeature) {
  EXPECT_EQ(candidateTargetIds(parse("gfx906:sramecc+")),
            (Strings{"gfx906:sramecc+", "gfx906", "gfx9-generic"}));
  EXPECT_EQ(candidateTargetIds(parse("gfx1310:xnack+")),
            (Strings{"gfx1310:xnack+", "gfx1310"}));
}

TEST(TargetIdCandidates, AllCompatibleWithAgent) {
  for (const char *A : {"gfx942:sramecc+:xnack-", "gfx90a:sramecc-:xnack+",
                        "gfx1100", "gfx1010:xnack-"}) {
    TargetId Agent = parse(A);
    for (const std::string &C : candidateTargetIds(Agent, false))
      EXPECT_TRUE(isCompatible(parse(C), Agent)) << A << " " << C;
  }
}

TEST(TargetIdSelect, MostSpecificWins) {
  TargetId Agent = parse("gfx942:sramecc+:xnack-");
  EXPECT_EQ(selectTargetId(
                {"gfx942", "gfx942:sramecc+:xnack-", "gfx942:xnack-"}, Agent),
            1);
  EXPECT_EQ(selectTargetId({"gfx9-4-generic", "gfx942:xnack-"}, Agent), 1);
  EXPECT_EQ(selectTargetId({"gfx9-4-generic:xnack-", "gfx90a"}, Agent), 0);
}

TEST(TargetIdSelect, NativeBeforeGeneric) {
  TargetId Agent = parse("gfx1101");
  EXPECT_EQ(selectTargetId({"gfx11-generic", "gfx1101"}, Agent), 1);
  EXPECT_EQ(selectTargetId({"gfx1100", "gfx11-generic"}, Agent), 1);
}

TEST(TargetIdSelect, IncompatibleFeatureNeverMatches) {
  // xnack+ code never runs on an xnack- agent.
  EXPECT_EQ(selectTargetId({"gfx90a:xnack+"}, parse("gfx90a:xnack-")), -1);
  EXPECT_EQ(selectTargetId({"gfx90a:xnack+", "gfx90a"}, parse("gfx90a:xnack-")),
            1);
}

TEST(TargetIdSelect, OfferedInAnyForm) {
  TargetId Agent = parse("gfx942:sramecc+:xnack-");
  EXPECT_EQ(
      selectTargetId({"garbage", "amdgcn-amd-amdhsa--gfx942:xnack-:sramecc+"},
                     Agent),
      1);
  EXPECT_EQ(selectTargetId({}, Agent), -1);
  EXPECT_EQ(selectTargetId({"gfx1100", "gfx11-generic"}, Agent), -1);
}

} // namespace
