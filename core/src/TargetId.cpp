//===- TargetId.cpp - AMDGPU target IDs and matching ----------------------===//
//
// Target-ID syntax follows clang (processor, then ":feature+" / ":feature-");
// the generic-processor table and the features each generic processor accepts
// follow LLVM 22 (llvm/docs/AMDGPUUsage.rst, "AMDGPU Generic Processors";
// llvm/lib/Target/AMDGPU/GCNProcessors.td). See docs/shim.md for the sources
// and for where they disagree with other documents.
//
//===----------------------------------------------------------------------===//

#include "kpack/TargetId.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace kpack {

namespace {

// What LLVM 22 says about one processor: the target features clang accepts
// in its target IDs and the generic processor whose code runs on it. Checked
// against clang++-22 (--offload-arch=<processor>:<feature>+) and LLVM's
// "AMDGPU Generic Processors" table. gfx908 and gfx90a belong to no generic
// processor, whatever some issue texts say (docs/shim.md).
struct ProcessorInfo {
  const char *Name;
  const char *Generic; ///< nullptr if none (and for generic processors)
  bool Sramecc;
  bool Xnack;
};

const ProcessorInfo Processors[] = {
    // clang-format off
    // processor          generic processor    sramecc xnack
    {"gfx600",          nullptr,             false, false},
    {"gfx601",          nullptr,             false, false},
    {"gfx602",          nullptr,             false, false},
    {"gfx700",          nullptr,             false, false},
    {"gfx701",          nullptr,             false, false},
    {"gfx702",          nullptr,             false, false},
    {"gfx703",          nullptr,             false, false},
    {"gfx704",          nullptr,             false, false},
    {"gfx705",          nullptr,             false, false},
    {"gfx801",          nullptr,             false, true},
    {"gfx802",          nullptr,             false, false},
    {"gfx803",          nullptr,             false, false},
    {"gfx805",          nullptr,             false, false},
    {"gfx810",          nullptr,             false, true},
    {"gfx900",          "gfx9-generic",      false, true},
    {"gfx902",          "gfx9-generic",      false, true},
    {"gfx904",          "gfx9-generic",      false, true},
    {"gfx906",          "gfx9-generic",      true,  true},
    {"gfx908",          nullptr,             true,  true},
    {"gfx909",          "gfx9-generic",      false, true},
    {"gfx90a",          nullptr,             true,  true},
    {"gfx90c",          "gfx9-generic",      false, true},
    {"gfx942",          "gfx9-4-generic",    true,  true},
    {"gfx950",          "gfx9-4-generic",    true,  true},
    {"gfx1010",         "gfx10-1-generic",   false, true},
    {"gfx1011",         "gfx10-1-generic",   false, true},
    {"gfx1012",         "gfx10-1-generic",   false, true},
    {"gfx1013",         "gfx10-1-generic",   false, true},
    {"gfx1030",         "gfx10-3-generic",   false, false},
    {"gfx1031",         "gfx10-3-generic",   false, false},
    {"gfx1032",         "gfx10-3-generic",   false, false},
    {"gfx1033",         "gfx10-3-generic",   false, false},
    {"gfx1034",         "gfx10-3-generic",   false, false},
    {"gfx1035",         "gfx10-3-generic",   false, false},
    {"gfx1036",         "gfx10-3-generic",   false, false},
    {"gfx1100",         "gfx11-generic",     false, false},
    {"gfx1101",         "gfx11-generic",     false, false},
    {"gfx1102",         "gfx11-generic",     false, false},
    {"gfx1103",         "gfx11-generic",     false, false},
    {"gfx1150",         "gfx11-generic",     false, false},
    {"gfx1151",         "gfx11-generic",     false, false},
    {"gfx1152",         "gfx11-generic",     false, false},
    {"gfx1153",         "gfx11-generic",     false, false},
    {"gfx1200",         "gfx12-generic",     false, false},
    {"gfx1201",         "gfx12-generic",     false, false},
    {"gfx1250",         nullptr,             false, false},
    {"gfx1251",         nullptr,             false, false},
    // The generic processors themselves.
    {"gfx9-generic",    nullptr,             false, true},
    {"gfx9-4-generic",  nullptr,             true,  true},
    {"gfx10-1-generic", nullptr,             false, true},
    {"gfx10-3-generic", nullptr,             false, false},
    {"gfx11-generic",   nullptr,             false, false},
    {"gfx12-generic",   nullptr,             false, false},
    // clang-format on
};

const ProcessorInfo *findProcessor(const std::string &Name) {
  for (const ProcessorInfo &P : Processors)
    if (Name == P.Name)
      return &P;
  return nullptr;
}

bool isProcessorName(const std::string &S) {
  if (S.size() < 4 || S.compare(0, 3, "gfx") != 0)
    return false;
  for (char C : S)
    if (!((C >= 'a' && C <= 'z') || (C >= '0' && C <= '9') || C == '-'))
      return false;
  return S.back() != '-';
}

void appendFeature(std::string &Out, const char *Name, FeatureState State) {
  if (State == FeatureState::Any)
    return;
  Out += ':';
  Out += Name;
  Out += State == FeatureState::On ? '+' : '-';
}

// Appends the loader's feature subsets of Processor with the given features
// (featureSubsets), each target ID once.
void appendCandidates(const std::string &Processor, FeatureState Sramecc,
                      FeatureState Xnack, std::vector<std::string> &Out) {
  TargetId Id;
  Id.Processor = Processor;
  Id.Sramecc = Sramecc;
  Id.Xnack = Xnack;
  for (std::string &Text : featureSubsets(Id.str()))
    if (std::find(Out.begin(), Out.end(), Text) == Out.end())
      Out.push_back(std::move(Text));
}

} // namespace

std::string TargetId::str() const {
  std::string Out = Processor;
  appendFeature(Out, "sramecc", Sramecc);
  appendFeature(Out, "xnack", Xnack);
  return Out;
}

std::optional<TargetId> parseTargetId(const std::string &Text) {
  std::string Rest(stripTargetTriple(Text));

  TargetId Id;
  size_t Colon = Rest.find(':');
  Id.Processor = Rest.substr(0, Colon);
  if (!isProcessorName(Id.Processor))
    return std::nullopt;

  while (Colon != std::string::npos) {
    size_t Next = Rest.find(':', Colon + 1);
    std::string Feature =
        Rest.substr(Colon + 1, Next == std::string::npos ? std::string::npos
                                                         : Next - Colon - 1);
    Colon = Next;
    if (Feature.size() < 2)
      return std::nullopt;
    char Sign = Feature.back();
    if (Sign != '+' && Sign != '-')
      return std::nullopt;
    Feature.pop_back();
    FeatureState *Slot = Feature == "sramecc" ? &Id.Sramecc
                         : Feature == "xnack" ? &Id.Xnack
                                              : nullptr;
    if (!Slot || *Slot != FeatureState::Any)
      return std::nullopt; // unknown or duplicate feature
    *Slot = Sign == '+' ? FeatureState::On : FeatureState::Off;
  }

  // A known processor only takes the features LLVM gives it (clang rejects
  // "gfx1100:xnack+" and "gfx11-generic:xnack+"). Unknown (newer) processors
  // are accepted as written.
  if (const ProcessorInfo *P = findProcessor(Id.Processor)) {
    if ((!P->Sramecc && Id.Sramecc != FeatureState::Any) ||
        (!P->Xnack && Id.Xnack != FeatureState::Any))
      return std::nullopt;
  }
  return Id;
}

std::string genericProcessorFor(const std::string &Processor) {
  const ProcessorInfo *P = findProcessor(Processor);
  return P && P->Generic ? P->Generic : "";
}

bool isGenericProcessor(const std::string &Processor) {
  for (const ProcessorInfo &P : Processors)
    if (P.Generic && Processor == P.Generic)
      return true;
  return false;
}

std::vector<std::string> processorsServedBy(const std::string &Processor) {
  std::vector<std::string> Out;
  if (isGenericProcessor(Processor)) {
    for (const ProcessorInfo &P : Processors)
      if (P.Generic && Processor == P.Generic)
        Out.push_back(P.Name);
  } else if (Processor.size() < 8 ||
             Processor.compare(Processor.size() - 8, 8, "-generic") != 0) {
    Out.push_back(Processor);
  }
  return Out;
}

std::optional<ProcessorFeatures>
supportedFeatures(const std::string &Processor) {
  const ProcessorInfo *P = findProcessor(Processor);
  if (!P)
    return std::nullopt;
  return ProcessorFeatures{P->Sramecc, P->Xnack};
}

bool isCompatible(const TargetId &CodeObject, const TargetId &Agent) {
  if (CodeObject.Processor != Agent.Processor)
    return false;
  if (CodeObject.Sramecc != FeatureState::Any &&
      CodeObject.Sramecc != Agent.Sramecc)
    return false;
  if (CodeObject.Xnack != FeatureState::Any && CodeObject.Xnack != Agent.Xnack)
    return false;
  return true;
}

std::vector<std::string> candidateTargetIds(const TargetId &Agent,
                                            bool IncludeGeneric) {
  std::vector<std::string> Out;
  appendCandidates(Agent.Processor, Agent.Sramecc, Agent.Xnack, Out);
  if (!IncludeGeneric)
    return Out;
  // The generic processor's candidates keep only the features it accepts.
  const ProcessorInfo *P = findProcessor(Agent.Processor);
  if (const ProcessorInfo *G =
          P && P->Generic ? findProcessor(P->Generic) : nullptr)
    appendCandidates(G->Name, G->Sramecc ? Agent.Sramecc : FeatureState::Any,
                     G->Xnack ? Agent.Xnack : FeatureState::Any, Out);
  return Out;
}

std::vector<std::string> agentRequests(const TargetId &Agent) {
  std::vector<std::string> Requests = {Agent.str()};
  const std::string Generic = genericProcessorFor(Agent.Processor);
  if (!Generic.empty()) {
    TargetId G = Agent;
    G.Processor = Generic;
    std::optional<ProcessorFeatures> F = supportedFeatures(Generic);
    if (!F || !F->Sramecc)
      G.Sramecc = FeatureState::Any;
    if (!F || !F->Xnack)
      G.Xnack = FeatureState::Any;
    Requests.push_back(G.str());
  }
  return Requests;
}

int selectTargetId(const std::vector<std::string> &Offered,
                   const TargetId &Agent) {
  // Compare canonical forms, so "amdgcn-amd-amdhsa--gfx942:xnack-:sramecc+"
  // is found as "gfx942:sramecc+:xnack-".
  std::vector<std::string> Canonical;
  Canonical.reserve(Offered.size());
  for (const std::string &O : Offered) {
    std::optional<TargetId> Id = parseTargetId(O);
    Canonical.push_back(Id ? Id->str() : std::string());
  }
  for (const std::string &Candidate : candidateTargetIds(Agent))
    for (size_t I = 0; I != Canonical.size(); ++I)
      if (Canonical[I] == Candidate)
        return static_cast<int>(I);
  return -1;
}

std::string_view stripTargetTriple(std::string_view Arch) {
  if (Arch.substr(0, TargetTriplePrefix.size()) == TargetTriplePrefix)
    Arch.remove_prefix(TargetTriplePrefix.size());
  return Arch;
}

std::vector<std::string> featureSubsets(std::string_view Arch) {
  Arch = stripTargetTriple(Arch);
  std::vector<std::string_view> Parts;
  size_t Start = 0;
  for (size_t I = 0; I <= Arch.size(); ++I)
    if (I == Arch.size() || Arch[I] == ':') {
      Parts.push_back(Arch.substr(Start, I - Start));
      Start = I + 1;
    }
  const std::string_view Processor = Parts.front();
  const size_t N = Parts.size() - 1;
  if (N == 0 || N > MaxSubsetFeatures)
    return {std::string(Arch)};
  std::vector<std::string> Out;
  Out.reserve(size_t(1) << N);
  for (uint32_t Mask = (uint32_t(1) << N); Mask-- > 0;) {
    std::string Candidate(Processor);
    for (size_t F = 0; F < N; ++F)
      if (Mask & (uint32_t(1) << (N - 1 - F)))
        Candidate.append(":").append(Parts[F + 1]);
    if (std::find(Out.begin(), Out.end(), Candidate) == Out.end())
      Out.push_back(std::move(Candidate));
  }
  return Out;
}

bool splitTargetIdList(std::string_view Text, std::vector<std::string> &Out) {
  Out.clear();
  size_t Start = 0;
  for (size_t I = 0; I <= Text.size(); ++I) {
    if (I != Text.size() && Text[I] != ',' && Text[I] != ':')
      continue;
    std::string_view Token = Text.substr(Start, I - Start);
    Start = I + 1;
    while (!Token.empty() && (Token.front() == ' ' || Token.front() == '\t'))
      Token.remove_prefix(1);
    while (!Token.empty() && (Token.back() == ' ' || Token.back() == '\t'))
      Token.remove_suffix(1);
    if (Token.empty())
      continue;
    // The triple prefix "amdgcn-amd-amdhsa--" holds no separator.
    bool StartsId =
        Token.substr(0, 3) == "gfx" || Token.substr(0, 7) == "amdgcn-";
    if (StartsId)
      Out.emplace_back(Token);
    else if (Out.empty())
      return false;
    else
      Out.back().append(":").append(Token);
  }
  return true;
}

} // namespace kpack
