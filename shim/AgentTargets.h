//===- AgentTargets.h - Target IDs of the GPUs present ----------*- C++ -*-===//
//
// Which code objects the registration shim must load: the full target ID of
// every GPU agent, read from the KFD topology in sysfs the way the ROCm
// runtime derives its ISA names, or taken from ROCM_KPACK_ARCH_OVERRIDE.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SHIM_AGENTTARGETS_H
#define KPACK_SHIM_AGENTTARGETS_H

#include "kpack/Error.h"
#include "kpack/TargetId.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kpack {
namespace shim {

/// "gfx90a" for KFD's gfx_target_version 90010: major * 10000 + minor * 100 +
/// stepping, minor and stepping printed as one hex digit each. "" for 0 (a
/// CPU node) or values outside that encoding.
std::string processorForGfxTargetVersion(uint64_t Version);

/// Parses ROCM_KPACK_ARCH_OVERRIDE: target IDs separated by ',' or ':'. A
/// ':'-separated token that starts with "gfx" (or the amdgcn triple) begins a
/// new target ID; any other token is a feature of the current one, so
/// "gfx942:sramecc+:xnack-:gfx1100" names two agents.
Status parseArchOverride(const std::string &Text, std::vector<TargetId> &Out);

/// The xnack mode of a process that does not choose one: HSA_XNACK when set
/// ("1" on, "0" off), else on only when amdgpu's retry faults are enabled
/// (module parameter noretry = 0).
FeatureState defaultXnackMode(const std::string &SysfsRoot);

/// Reads <SysfsRoot>/class/kfd/kfd/topology/nodes/<N>/properties for every
/// node, in node order, and returns the target ID of each GPU node (CPU nodes
/// have gfx_target_version 0). sramecc comes from the capability bit
/// HSA_CAP_SRAM_EDCSUPPORTED, xnack from defaultXnackMode; each only for
/// processors that take the feature. A missing topology means no GPUs.
Status readKfdTopology(const std::string &SysfsRoot,
                       std::vector<TargetId> &Out);

/// The agents to serve: ROCM_KPACK_ARCH_OVERRIDE if set, else the KFD
/// topology under ROCM_KPACK_SHIM_SYSFS_ROOT (test only) or /sys. Duplicate
/// target IDs (several identical GPUs) appear once. On Windows (no KFD) only
/// the override; without it an error (docs/shim.md, "Windows").
Status detectAgentTargets(std::vector<TargetId> &Out);

} // namespace shim
} // namespace kpack

#endif
