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
#include "kpack/KfdTopology.h"
#include "kpack/TargetId.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kpack {
namespace shim {

// The KFD topology reader is kpack_core's (kpack/KfdTopology.h), shared
// with `kpack doctor`.
using kpack::defaultXnackMode;
using kpack::processorForGfxTargetVersion;
using kpack::readKfdTopology;

/// Parses ROCM_KPACK_ARCH_OVERRIDE: target IDs separated by ',' or ':'. A
/// ':'-separated token that starts with "gfx" (or the amdgcn triple) begins a
/// new target ID; any other token is a feature of the current one, so
/// "gfx942:sramecc+:xnack-:gfx1100" names two agents.
Status parseArchOverride(const std::string &Text, std::vector<TargetId> &Out);

/// The agents to serve: ROCM_KPACK_ARCH_OVERRIDE if set, else the KFD
/// topology under ROCM_KPACK_SHIM_SYSFS_ROOT (test only) or /sys. Duplicate
/// target IDs (several identical GPUs) appear once. On Windows (no KFD) only
/// the override; without it an error (docs/shim.md, "Windows").
Status detectAgentTargets(std::vector<TargetId> &Out);

} // namespace shim
} // namespace kpack

#endif
