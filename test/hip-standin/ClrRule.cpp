//===- ClrRule.cpp - CLR's code-object selection, re-implemented ----------===//
//
// Sources (docs/testing.md, "The stand-in's own CLR rule"):
//  - ROCm/rocm-systems projects/clr/hipamd/src/hip_fatbin.cpp:
//    TargetGenericMap, TargetFeatureCheck, TargetToGeneric,
//    FatBinaryInfo::ExtractFatBinaryUsingCOMGR, PopulateCodeObjectMap,
//    UncompressAndPopulateCodeObject, FatBinaryInfo::ExtractKpackBinary;
//  - ROCm/llvm-project amd/comgr/src/comgr-metadata.cpp: isCompatibleIsaName,
//    lookUpCodeObject, parseTargetIdentifier, isSupportedFeature;
//  - clang's OffloadBundler (isCompatibleTargetID), which comgr's unbundle
//    action runs for compressed bundles;
//  - LLVM 22's AMDGPU processor list and the features each accepts
//    (llvm/TargetParser/TargetParser.h, FEATURE_XNACK / FEATURE_SRAMECC).
//
//===----------------------------------------------------------------------===//

#include "ClrRule.h"

#include <cstring>
#include <set>

namespace hipstandin {
namespace clr {

const char IsaPrefix[] = "amdgcn-amd-amdhsa--";

namespace {

/// An AMDGCN processor comgr knows, and the target features comgr accepts in
/// its ISA names (comgr's isSupportedFeature: xnack for processors with
/// xnack on/off modes, sramecc for those with SRAM ECC), per LLVM 22.
struct Processor {
  const char *Name;
  bool Sramecc, Xnack;
};

const Processor Processors[] = {
    {"gfx600", false, false},
    {"gfx601", false, false},
    {"gfx602", false, false},
    {"gfx700", false, false},
    {"gfx701", false, false},
    {"gfx702", false, false},
    {"gfx703", false, false},
    {"gfx704", false, false},
    {"gfx705", false, false},
    {"gfx801", false, true},
    {"gfx802", false, false},
    {"gfx803", false, false},
    {"gfx805", false, false},
    {"gfx810", false, true},
    {"gfx900", false, true},
    {"gfx902", false, true},
    {"gfx904", false, true},
    {"gfx906", true, true},
    {"gfx908", true, true},
    {"gfx909", false, true},
    {"gfx90a", true, true},
    {"gfx90c", false, true},
    {"gfx942", true, true},
    {"gfx950", true, true},
    {"gfx1010", false, true},
    {"gfx1011", false, true},
    {"gfx1012", false, true},
    {"gfx1013", false, true},
    {"gfx1030", false, false},
    {"gfx1031", false, false},
    {"gfx1032", false, false},
    {"gfx1033", false, false},
    {"gfx1034", false, false},
    {"gfx1035", false, false},
    {"gfx1036", false, false},
    {"gfx1100", false, false},
    {"gfx1101", false, false},
    {"gfx1102", false, false},
    {"gfx1103", false, false},
    {"gfx1150", false, false},
    {"gfx1151", false, false},
    {"gfx1152", false, false},
    {"gfx1153", false, false},
    {"gfx1200", false, false},
    {"gfx1201", false, false},
    {"gfx1250", false, false},
    {"gfx1251", false, false},
    {"gfx9-generic", false, true},
    {"gfx9-4-generic", true, true},
    {"gfx10-1-generic", false, true},
    {"gfx10-3-generic", false, false},
    {"gfx11-generic", false, false},
    {"gfx12-generic", false, false},
};

const Processor *findProcessor(const std::string &Name) {
  for (const Processor &P : Processors)
    if (Name == P.Name)
      return &P;
  return nullptr;
}

/// CLR's generic map (hip_fatbin.cpp, TargetGenericMap). It is CLR's own
/// table, not LLVM's: it has no entry for gfx908, gfx90a, gfx1250, gfx1251.
struct GenericOf {
  const char *Processor, *Generic;
};
const GenericOf ClrGenericMap[] = {
    {"gfx900", "gfx9-generic"},     {"gfx902", "gfx9-generic"},
    {"gfx904", "gfx9-generic"},     {"gfx906", "gfx9-generic"},
    {"gfx909", "gfx9-generic"},     {"gfx90c", "gfx9-generic"},
    {"gfx942", "gfx9-4-generic"},   {"gfx950", "gfx9-4-generic"},
    {"gfx1010", "gfx10-1-generic"}, {"gfx1011", "gfx10-1-generic"},
    {"gfx1012", "gfx10-1-generic"}, {"gfx1013", "gfx10-1-generic"},
    {"gfx1030", "gfx10-3-generic"}, {"gfx1031", "gfx10-3-generic"},
    {"gfx1032", "gfx10-3-generic"}, {"gfx1033", "gfx10-3-generic"},
    {"gfx1034", "gfx10-3-generic"}, {"gfx1035", "gfx10-3-generic"},
    {"gfx1036", "gfx10-3-generic"}, {"gfx1100", "gfx11-generic"},
    {"gfx1101", "gfx11-generic"},   {"gfx1102", "gfx11-generic"},
    {"gfx1103", "gfx11-generic"},   {"gfx1150", "gfx11-generic"},
    {"gfx1151", "gfx11-generic"},   {"gfx1152", "gfx11-generic"},
    {"gfx1153", "gfx11-generic"},   {"gfx1200", "gfx12-generic"},
    {"gfx1201", "gfx12-generic"},
};

/// An ISA name split as comgr's parseTargetIdentifier splits it: five
/// '-'-separated fields (the last one may contain '-', as in
/// "gfx11-generic"), the last being the processor and ':'-separated
/// features. Feature values: '+', '-', or ' ' when unspecified.
struct Isa {
  std::string Arch, Processor;
  char Sramecc = ' ', Xnack = ' ';
};

/// Splits Name into Out. Validate: also require what comgr requires of a
/// valid name (a known processor, only the features it supports).
bool parseIsa(const std::string &Name, bool Validate, Isa &Out) {
  size_t Pos = 0;
  for (int Field = 0; Field < 4; ++Field) {
    size_t Dash = Name.find('-', Pos);
    if (Dash == std::string::npos)
      return false;
    if (Field == 0)
      Out.Arch = Name.substr(0, Dash);
    Pos = Dash + 1;
  }
  std::string Rest = Name.substr(Pos);
  size_t Colon = Rest.find(':');
  Out.Processor = Rest.substr(0, Colon);
  if (Out.Processor.empty())
    return false;
  const Processor *P = findProcessor(Out.Processor);
  if (Validate && (Out.Arch != "amdgcn" || !P))
    return false;
  while (Colon != std::string::npos) {
    size_t Next = Rest.find(':', Colon + 1);
    std::string Feature = Rest.substr(
        Colon + 1, Next == std::string::npos ? Next : Next - Colon - 1);
    Colon = Next;
    if (Feature.size() < 2)
      return false;
    char Value = Feature.back();
    Feature.pop_back();
    if (Value != '+' && Value != '-')
      return false;
    if (Feature == "sramecc" && (!Validate || P->Sramecc))
      Out.Sramecc = Value;
    else if (Feature == "xnack" && (!Validate || P->Xnack))
      Out.Xnack = Value;
    else if (Validate)
      return false;
  }
  return true;
}

bool featuresCompatible(const Isa &Agent, const Isa &CodeObject) {
  if (Agent.Processor != CodeObject.Processor)
    return false;
  if (CodeObject.Sramecc != ' ' && CodeObject.Sramecc != Agent.Sramecc)
    return false;
  if (CodeObject.Xnack != ' ' && CodeObject.Xnack != Agent.Xnack)
    return false;
  return true;
}

/// "hipv4-amdgcn-amd-amdhsa--gfx1100" -> "hipv4" and the ISA name, as
/// comgr's lookUpCodeObject splits a bundle entry ID (at the first '-').
void splitEntryId(const std::string &Id, std::string &Kind, std::string &Isa) {
  size_t Dash = Id.find('-');
  Kind = Id.substr(0, Dash);
  Isa = Dash == std::string::npos ? "" : Id.substr(Dash + 1);
}

bool isHipKind(const std::string &Kind) {
  return Kind == "hip" || Kind == "hipv4" || Kind == "hcc";
}

} // namespace

std::optional<std::string> agentIsaName(const std::string &Text) {
  std::string Name = Text.compare(0, strlen(IsaPrefix), IsaPrefix) == 0
                         ? Text
                         : IsaPrefix + Text;
  Isa I;
  if (!parseIsa(Name, /*Validate=*/true, I))
    return std::nullopt;
  // Reject a feature given twice with different values, or repeated.
  size_t Features = 0;
  for (size_t P = Name.find(':'); P != std::string::npos;
       P = Name.find(':', P + 1))
    ++Features;
  if (Features != size_t(I.Sramecc != ' ') + size_t(I.Xnack != ' '))
    return std::nullopt;
  std::string Out = IsaPrefix + I.Processor;
  if (I.Sramecc != ' ')
    Out += std::string(":sramecc") + I.Sramecc;
  if (I.Xnack != ' ')
    Out += std::string(":xnack") + I.Xnack;
  return Out;
}

std::string targetToGeneric(const std::string &IsaName) {
  // CLR looks the name up without its features, then appends the agent's
  // sramecc and xnack settings (found as substrings) whatever the generic
  // processor accepts.
  std::string Base = IsaName.substr(0, IsaName.find(':'));
  if (Base.compare(0, strlen(IsaPrefix), IsaPrefix) != 0)
    return "";
  std::string Processor = Base.substr(strlen(IsaPrefix));
  for (const GenericOf &G : ClrGenericMap) {
    if (Processor != G.Processor)
      continue;
    std::string Out = IsaPrefix + std::string(G.Generic);
    for (const char *Feature : {"sramecc", "xnack"})
      for (const char *Value : {"+", "-"}) {
        std::string Setting = std::string(Feature) + Value;
        if (IsaName.find(Setting) != std::string::npos) {
          Out += ":" + Setting;
          break;
        }
      }
    return Out;
  }
  return "";
}

bool comgrIsCompatible(const std::string &AgentIsa,
                       const std::string &CodeObjectIsa) {
  if (AgentIsa == CodeObjectIsa)
    return true;
  Isa Agent, CodeObject;
  return parseIsa(CodeObjectIsa, /*Validate=*/true, CodeObject) &&
         parseIsa(AgentIsa, /*Validate=*/true, Agent) &&
         featuresCompatible(Agent, CodeObject);
}

bool bundlerIsCompatible(const std::string &RequestedIsa,
                         const std::string &CodeObjectIsa) {
  Isa Requested, CodeObject;
  return parseIsa(CodeObjectIsa, /*Validate=*/false, CodeObject) &&
         parseIsa(RequestedIsa, /*Validate=*/false, Requested) &&
         CodeObject.Arch == Requested.Arch &&
         featuresCompatible(Requested, CodeObject);
}

std::vector<Choice> selectCodeObjects(const std::vector<std::string> &EntryIds,
                                      const std::vector<std::string> &AgentIsas,
                                      bool Compressed) {
  // CLR's query set: every agent's ISA name and generic name, sorted and
  // without duplicates (a std::set<std::string>).
  std::set<std::string> QuerySet;
  for (const std::string &A : AgentIsas) {
    QuerySet.insert(A);
    std::string G = targetToGeneric(A);
    if (!G.empty())
      QuerySet.insert(G);
  }
  std::vector<std::string> Queries(QuerySet.begin(), QuerySet.end());
  std::vector<int> Found(Queries.size(), -1);

  if (!Compressed) {
    // comgr's lookUpCodeObject: walk the entries in bundle order; an entry
    // goes to the first query (in set order) that has none yet and is
    // compatible, and to no other query.
    for (size_t E = 0; E < EntryIds.size(); ++E) {
      std::string Kind, EntryIsa;
      splitEntryId(EntryIds[E], Kind, EntryIsa);
      if (!isHipKind(Kind))
        continue;
      for (size_t Q = 0; Q < Queries.size(); ++Q) {
        if (Found[Q] >= 0 || !comgrIsCompatible(Queries[Q], EntryIsa))
          continue;
        Found[Q] = static_cast<int>(E);
        break;
      }
    }
  } else {
    // comgr's unbundle action (clang-offload-bundler): each requested
    // "hipv4-<query>" takes the first compatible entry in bundle order.
    for (size_t Q = 0; Q < Queries.size(); ++Q)
      for (size_t E = 0; E < EntryIds.size() && Found[Q] < 0; ++E) {
        std::string Kind, EntryIsa;
        splitEntryId(EntryIds[E], Kind, EntryIsa);
        if (isHipKind(Kind) && bundlerIsCompatible(Queries[Q], EntryIsa))
          Found[Q] = static_cast<int>(E);
      }
  }

  auto lookup = [&](const std::string &Name) {
    for (size_t Q = 0; Q < Queries.size(); ++Q)
      if (Queries[Q] == Name)
        return Found[Q];
    return -1;
  };
  // Per agent: its own name's code object, else its generic name's.
  std::vector<Choice> Out(AgentIsas.size());
  for (size_t A = 0; A < AgentIsas.size(); ++A) {
    Out[A].Entry = lookup(AgentIsas[A]);
    if (Out[A].Entry < 0) {
      std::string G = targetToGeneric(AgentIsas[A]);
      if (!G.empty()) {
        Out[A].Entry = lookup(G);
        Out[A].Generic = Out[A].Entry >= 0;
      }
    }
  }
  return Out;
}

std::vector<std::string> kpackArchList(const std::string &AgentIsa) {
  std::vector<std::string> List{AgentIsa};
  std::string G = targetToGeneric(AgentIsa);
  if (!G.empty())
    List.push_back(G);
  return List;
}

} // namespace clr
} // namespace hipstandin
