//===- kpack/KfdTopology.h - Target IDs of this machine's GPUs --*- C++ -*-===//
//
// The full target ID of every GPU the Linux kernel's KFD driver lists in
// sysfs, derived the way the ROCm runtime derives its ISA names. Used by the
// registration shim (which GPUs to serve) and by `kpack doctor` (which GPUs
// to check when none is named).
//
// What KFD exposes (include/uapi/linux/kfd_sysfs.h,
// drivers/gpu/drm/amd/amdkfd/kfd_topology.c): per node
// class/kfd/kfd/topology/nodes/<N>/properties, "name value" lines;
// gfx_target_version is major * 10000 + minor * 100 + stepping (0 for a CPU
// node); the capability bit HSA_CAP_SRAM_EDCSUPPORTED is the GPU's SRAM ECC
// state (sramecc+ / sramecc-). xnack is no property of the device but a mode
// of the process: ROCr turns it on when HSA_XNACK=1, and by default when
// the amdgpu driver retries page faults (module parameter noretry = 0).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_KFDTOPOLOGY_H
#define KPACK_KFDTOPOLOGY_H

#include "kpack/Error.h"
#include "kpack/TargetId.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kpack {

/// "gfx90a" for KFD's gfx_target_version 90010: major * 10000 + minor * 100 +
/// stepping, minor and stepping printed as one hex digit each. "" for 0 (a
/// CPU node) or values outside that encoding.
std::string processorForGfxTargetVersion(uint64_t Version);

/// The xnack mode of a process that does not choose one: HSA_XNACK when set
/// ("1" on, "0" off), else on only when amdgpu's retry faults are enabled
/// (<SysfsRoot>/module/amdgpu/parameters/noretry = 0).
FeatureState defaultXnackMode(const std::string &SysfsRoot);

/// Reads <SysfsRoot>/class/kfd/kfd/topology/nodes/<N>/properties for every
/// node, in node order, and returns the target ID of each GPU node (CPU nodes
/// have gfx_target_version 0); identical GPUs appear once. sramecc comes from
/// the capability bit HSA_CAP_SRAM_EDCSUPPORTED, xnack from defaultXnackMode;
/// each only for processors that take the feature. A missing topology means
/// no GPUs (not an error).
Status readKfdTopology(const std::string &SysfsRoot,
                       std::vector<TargetId> &Out);

} // namespace kpack

#endif
