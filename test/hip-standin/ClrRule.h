//===- ClrRule.h - CLR's code-object selection, re-implemented --*- C++ -*-===//
//
// The stand-in HIP runtime's own model of how ROCm's HIP runtime (CLR) and
// comgr choose the code object a GPU agent loads from an offload bundle.
// It is written from CLR's and comgr's behaviour (docs/testing.md names the
// functions each rule comes from) and shares no code with the project's
// target-ID library (kpack/TargetId.h), so that tests comparing the
// registration shim with the stand-in can catch a wrong rule in either.
//
// Names here are CLR's "ISA names": "amdgcn-amd-amdhsa--" followed by a
// target ID, e.g. "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-".
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_HIP_STANDIN_CLRRULE_H
#define KPACK_HIP_STANDIN_CLRRULE_H

#include <optional>
#include <string>
#include <vector>

namespace hipstandin {
namespace clr {

/// "amdgcn-amd-amdhsa--".
extern const char IsaPrefix[];

/// The ISA name a GPU agent with this target ID reports, features in the
/// order ROCr spells them (sramecc, then xnack), e.g. "gfx90a:xnack+:sramecc-"
/// -> "amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+". nullopt if Text is not a
/// target ID of a processor LLVM 22 knows, with features that processor has.
/// A feature left out stays unspecified (a real agent always reports every
/// feature its processor has; the stand-in lets tests omit them).
std::optional<std::string> agentIsaName(const std::string &Text);

/// CLR's TargetToGeneric (hip_fatbin.cpp): the agent's generic processor
/// with every sramecc/xnack setting of the agent appended again, or "" if
/// CLR maps the processor to no generic one.
/// "amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-" ->
/// "amdgcn-amd-amdhsa--gfx9-generic:sramecc+:xnack-" (a name comgr then
/// rejects, since gfx9-generic has no sramecc).
std::string targetToGeneric(const std::string &IsaName);

/// comgr's isCompatibleIsaName: can a code object built for CodeObjectIsa run
/// on an agent named AgentIsa? Equal strings are; otherwise both must be
/// valid ISA names of the same processor and every feature the code object
/// specifies must be specified identically by the agent.
bool comgrIsCompatible(const std::string &AgentIsa,
                       const std::string &CodeObjectIsa);

/// clang-offload-bundler's isCompatibleTargetID, which comgr's unbundle
/// action applies to compressed bundles: the same feature rule, but target
/// IDs are checked for format only (no per-processor feature validation).
bool bundlerIsCompatible(const std::string &RequestedIsa,
                         const std::string &CodeObjectIsa);

/// What one agent receives from one bundle.
struct Choice {
  int Entry = -1;       ///< index into the bundle's entries, -1: none
  bool Generic = false; ///< found through the generic ISA name
};

/// CLR's choice for every agent (ExtractFatBinaryUsingCOMGR): the query set
/// is every agent's ISA name and generic name (a sorted set); comgr maps
/// each query to a bundle entry, then each agent takes the entry of its own
/// ISA name, else that of its generic name. EntryIds are the bundle entry
/// IDs as stored ("hipv4-amdgcn-amd-amdhsa--gfx1100"). Uncompressed bundles
/// use comgr's lookup (entries in bundle order; an entry goes to the first
/// compatible query still without one, and to that query only); compressed
/// ones comgr's unbundle action (each query takes the first compatible entry).
std::vector<Choice> selectCodeObjects(const std::vector<std::string> &EntryIds,
                                      const std::vector<std::string> &AgentIsas,
                                      bool Compressed);

/// The arch list CLR passes to kpack_load_code_object for one agent
/// (ExtractKpackBinary): its ISA name, then its generic name if any.
std::vector<std::string> kpackArchList(const std::string &AgentIsa);

} // namespace clr
} // namespace hipstandin

#endif
