//===- LLVMTargetTableTest.cpp - kpack's target-ID table vs LLVM 22 -------===//
//
// The project's processor table (kpack/TargetId.h: supportedFeatures,
// isGenericProcessor, genericProcessorFor) checked against LLVM 22's AMDGPU
// TargetParser, for every processor LLVM knows and for every processor the
// table knows:
//  - the table knows exactly LLVM's processors (no more, no fewer);
//  - each accepts the target features LLVM gives it (FEATURE_SRAMECC,
//    FEATURE_XNACK of getArchAttrAMDGCN);
//  - the generic processors are LLVM's (GK_AMDGCN_GENERIC_FIRST..LAST);
//  - a processor's generic processor is an LLVM generic one of its family
//    and ISA major version whose features it has. Which processors each
//    generic one covers is not in LLVM's API (it is the AMDGPU backend's
//    and AMDGPUUsage.rst's "Generic processors" table); that list is
//    spelled out below from LLVM 22's AMDGPUUsage.rst.
//
//===----------------------------------------------------------------------===//

#include "kpack/TargetId.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/TargetParser/TargetParser.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace AMDGPU = llvm::AMDGPU;

namespace {

/// LLVM 22's AMDGCN processors by canonical name (aliases such as "tahiti"
/// dropped).
std::set<std::string> llvmProcessors() {
  llvm::SmallVector<llvm::StringRef, 96> Names;
  AMDGPU::fillValidArchListAMDGCN(Names);
  std::set<std::string> Out;
  for (llvm::StringRef N : Names)
    if (AMDGPU::getArchNameAMDGCN(AMDGPU::parseArchAMDGCN(N)) == N)
      Out.insert(N.str());
  return Out;
}

bool llvmIsGeneric(const std::string &Name) {
  AMDGPU::GPUKind K = AMDGPU::parseArchAMDGCN(Name);
  return K >= AMDGPU::GK_AMDGCN_GENERIC_FIRST &&
         K <= AMDGPU::GK_AMDGCN_GENERIC_LAST;
}

/// AMDGPUUsage.rst (LLVM 22), "Generic processors": the processors each
/// generic processor's code runs on.
const std::map<std::string, std::string> &documentedGenericOf() {
  static const std::map<std::string, std::string> Map = [] {
    std::map<std::string, std::string> M;
    const std::pair<const char *, std::vector<const char *>> Table[] = {
        {"gfx9-generic",
         {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}},
        {"gfx9-4-generic", {"gfx942", "gfx950"}},
        {"gfx10-1-generic", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
        {"gfx10-3-generic",
         {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035",
          "gfx1036"}},
        {"gfx11-generic",
         {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
          "gfx1152", "gfx1153"}},
        {"gfx12-generic", {"gfx1200", "gfx1201"}},
    };
    for (const auto &[Generic, Covered] : Table)
      for (const char *P : Covered)
        M[P] = Generic;
    return M;
  }();
  return Map;
}

/// Every name of the forms AMDGPU processors take, to find what the
/// project's table knows (it has no list API): gfx<6..12><0..9><0..f> and
/// gfx<6..12><0..9><0..9><0..9>, and the generic spellings.
std::vector<std::string> candidateNames() {
  std::vector<std::string> Out;
  const char Hex[] = "0123456789abcdef";
  for (int Major = 6; Major <= 12; ++Major)
    for (int Minor = 0; Minor <= 9; ++Minor) {
      std::string Base = "gfx" + std::to_string(Major) + std::to_string(Minor);
      for (char S : std::string(Hex))
        Out.push_back(Base + S);
      for (int S = 0; S <= 99; ++S)
        Out.push_back(Base + (S < 10 ? "0" : "") + std::to_string(S));
      Out.push_back("gfx" + std::to_string(Major) + "-" +
                    std::to_string(Minor) + "-generic");
    }
  for (int Major = 6; Major <= 12; ++Major)
    Out.push_back("gfx" + std::to_string(Major) + "-generic");
  return Out;
}

TEST(TargetIdLLVM, TableKnowsEveryLLVMProcessor) {
  // LLVM 22 has 47 AMDGCN processors and 6 generic ones: not vacuous.
  ASSERT_GE(llvmProcessors().size(), 53u);
  for (const std::string &P : llvmProcessors())
    EXPECT_TRUE(kpack::supportedFeatures(P).has_value())
        << P << " is an LLVM 22 processor the table does not know";
}

TEST(TargetIdLLVM, TableKnowsNoProcessorLLVMDoesNot) {
  std::set<std::string> Llvm = llvmProcessors();
  for (const std::string &N : candidateNames()) {
    if (kpack::supportedFeatures(N)) {
      EXPECT_TRUE(Llvm.count(N))
          << N << " is in the table but LLVM 22 does not know it";
    }
  }
}

TEST(TargetIdLLVM, FeaturesMatch) {
  for (const std::string &P : llvmProcessors()) {
    std::optional<kpack::ProcessorFeatures> F = kpack::supportedFeatures(P);
    if (!F)
      continue; // reported by TableKnowsEveryLLVMProcessor
    unsigned Attr = AMDGPU::getArchAttrAMDGCN(AMDGPU::parseArchAMDGCN(P));
    EXPECT_EQ(F->Sramecc, (Attr & AMDGPU::FEATURE_SRAMECC) != 0)
        << P << ": sramecc";
    EXPECT_EQ(F->Xnack, (Attr & AMDGPU::FEATURE_XNACK) != 0) << P << ": xnack";
  }
}

TEST(TargetIdLLVM, GenericProcessorsAreLLVMs) {
  for (const std::string &P : llvmProcessors())
    EXPECT_EQ(kpack::isGenericProcessor(P), llvmIsGeneric(P)) << P;
  for (const std::string &N : candidateNames()) {
    if (kpack::isGenericProcessor(N)) {
      EXPECT_TRUE(llvmIsGeneric(N)) << N;
    }
  }
}

TEST(TargetIdLLVM, GenericProcessorOfEachProcessor) {
  for (const std::string &P : llvmProcessors()) {
    if (llvmIsGeneric(P)) {
      EXPECT_EQ(kpack::genericProcessorFor(P), "") << P;
      continue;
    }
    auto Doc = documentedGenericOf().find(P);
    std::string Expected =
        Doc == documentedGenericOf().end() ? "" : Doc->second;
    std::string G = kpack::genericProcessorFor(P);
    EXPECT_EQ(G, Expected) << P;
    if (G.empty())
      continue;
    // What LLVM's API can confirm about the pair.
    ASSERT_TRUE(llvmIsGeneric(G)) << P << " -> " << G;
    AMDGPU::GPUKind KP = AMDGPU::parseArchAMDGCN(P);
    AMDGPU::GPUKind KG = AMDGPU::parseArchAMDGCN(G);
    EXPECT_EQ(AMDGPU::getArchFamilyNameAMDGCN(KP),
              AMDGPU::getArchFamilyNameAMDGCN(KG))
        << P << " -> " << G;
    EXPECT_EQ(AMDGPU::getIsaVersion(P).Major, AMDGPU::getIsaVersion(G).Major)
        << P << " -> " << G;
    unsigned FP = AMDGPU::getArchAttrAMDGCN(KP);
    unsigned FG = AMDGPU::getArchAttrAMDGCN(KG);
    for (unsigned Feature : {AMDGPU::FEATURE_SRAMECC, AMDGPU::FEATURE_XNACK})
      EXPECT_TRUE(!(FG & Feature) || (FP & Feature))
          << P << " lacks a feature of its generic processor " << G;
  }
}

} // namespace
