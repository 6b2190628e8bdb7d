//===- kpack/TargetId.h - AMDGPU target IDs and matching --------*- C++ -*-===//
//
// Clang target IDs ("gfx942:sramecc+:xnack-", "gfx11-generic") and the rules
// that pick a code object for a GPU agent. The one place for architecture
// selection: the loader, the registration shim, the CLR patch and the kpack
// CLI all use it. No LLVM dependency.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TARGETID_H
#define KPACK_TARGETID_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kpack {

enum class FeatureState { Any, On, Off };

struct TargetId {
  std::string Processor; ///< "gfx90a", "gfx11-generic"
  FeatureState Sramecc = FeatureState::Any;
  FeatureState Xnack = FeatureState::Any;

  /// Canonical text: processor, then features in canonical order
  /// (sramecc before xnack), e.g. "gfx942:sramecc+:xnack-".
  std::string str() const;
};

/// Parses a target ID, tolerating an "amdgcn-amd-amdhsa--" prefix and features
/// in any order. Returns nullopt for text that is not a target ID (unknown or
/// duplicate feature, a feature the processor does not take such as
/// "gfx1100:xnack+" or "gfx11-generic:xnack+", ...).
std::optional<TargetId> parseTargetId(const std::string &Text);

/// The generic processor LLVM defines for Processor ("gfx1101" ->
/// "gfx11-generic", "gfx906" -> "gfx9-generic"), or "" if none. LLVM gives
/// gfx908 and gfx90a none (docs/shim.md lists the table and its sources).
std::string genericProcessorFor(const std::string &Processor);

/// True for LLVM's generic processors ("gfx9-generic", "gfx11-generic", ...).
bool isGenericProcessor(const std::string &Processor);

/// The processors whose agents load a code object built for Processor: the
/// loader's fallback (candidateTargetIds) read backwards, from the same
/// table. A generic processor serves every processor whose generic processor
/// it is ("gfx11-generic" -> gfx1100 ... gfx1103, gfx1150 ... gfx1153), in
/// the table's order; any other processor serves itself; a "-generic" name
/// this table does not know serves nothing.
std::vector<std::string> processorsServedBy(const std::string &Processor);

/// The target features a processor accepts in its target ID (LLVM 22).
struct ProcessorFeatures {
  bool Sramecc = false;
  bool Xnack = false;
};
/// nullopt for a processor this table does not know.
std::optional<ProcessorFeatures>
supportedFeatures(const std::string &Processor);

/// CLR's rule: can a code object built for CodeObject run on an agent whose
/// full target ID is Agent? Processors must be equal; a feature the code
/// object leaves unspecified matches anything; a specified one must equal the
/// agent's.
bool isCompatible(const TargetId &CodeObject, const TargetId &Agent);

/// The candidate target IDs for an agent, most specific first: the agent's
/// own ID, then with features dropped (right to left, then all combinations),
/// then the same for its generic processor, keeping only the features the
/// generic processor accepts. E.g. "gfx942:sramecc+:xnack-" ->
/// gfx942:sramecc+:xnack-, gfx942:sramecc+, gfx942:xnack-, gfx942,
/// gfx9-4-generic:sramecc+:xnack-, ...
std::vector<std::string> candidateTargetIds(const TargetId &Agent,
                                            bool IncludeGeneric = true);

/// What a GPU agent's code object is asked for, in order, as CLR asks
/// kpack_load_code_object (and the registration shim, and `kpack doctor`):
/// the agent's full target ID, then its generic processor with the features
/// that one accepts ("gfx942:sramecc+:xnack-" -> gfx942:sramecc+:xnack-,
/// gfx9-4-generic:sramecc+:xnack-; "gfx1101" -> gfx1101, gfx11-generic;
/// "gfx90a:xnack+" -> gfx90a:xnack+ only). The loader tries every feature
/// subset of each (featureSubsets).
std::vector<std::string> agentRequests(const TargetId &Agent);

/// Picks, among the offered target IDs, the one to load for Agent: the
/// first of candidateTargetIds(Agent) that is offered. Returns the index into
/// Offered, or -1.
int selectTargetId(const std::vector<std::string> &Offered,
                   const TargetId &Agent);

/// The target-ID triple prefix CLR puts in front of ISA names.
constexpr std::string_view TargetTriplePrefix = "amdgcn-amd-amdhsa--";

/// Drops a leading "amdgcn-amd-amdhsa--", if present.
std::string_view stripTargetTriple(std::string_view Arch);

/// What kpack_load_code_object tries for one entry of the caller's arch list
/// (docs/FORMAT.md §1.4, upstream's rule): the triple prefix stripped, then
/// every subset of the entry's features as written, most specific first, by
/// walking the power set from mask 2^n-1 down to 0 with the first feature as
/// the most significant bit: "gfx942:sramecc+:xnack-" -> gfx942:sramecc+:xnack-,
/// gfx942:sramecc+, gfx942:xnack-, gfx942. Purely textual: no generic
/// processor is derived (the caller lists those) and features are neither
/// validated nor reordered. An entry with more than MaxSubsetFeatures
/// features yields itself only.
constexpr unsigned MaxSubsetFeatures = 8;
std::vector<std::string> featureSubsets(std::string_view Arch);

/// Splits a list of target IDs separated by ',' or ':' (what
/// ROCM_KPACK_ARCH_OVERRIDE holds). Since ':' also separates a target ID's
/// features, a token that does not start a processor ("gfx...", or a triple
/// "amdgcn-...") is a feature of the previous ID: "gfx942:sramecc+:xnack-,
/// gfx1100" is two IDs. Returns false (Out unspecified) when a feature comes
/// before any processor.
bool splitTargetIdList(std::string_view Text, std::vector<std::string> &Out);

} // namespace kpack

#endif
