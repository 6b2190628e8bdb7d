//===- ArchiveSearch.h - Describes a failed code-object search --*- C++ -*-===//
//
// For the shim's "no code object for this GPU" message: which archive files
// the loader looked at for a HIPK wrapper and which targets each offers.
// Follows the search rules of docs/FORMAT.md §3.2-3.3 (ROCM_KPACK_PATH,
// ROCM_KPACK_PATH_PREFIX, paths relative to the binary, @GFXARCH@); used only
// on the error path, the loading itself is librocm_kpack's.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SHIM_ARCHIVESEARCH_H
#define KPACK_SHIM_ARCHIVESEARCH_H

#include "kpack/Metadata.h"
#include "kpack/SearchPaths.h"
#include "kpack/TargetId.h"

#include <string>
#include <vector>

namespace kpack {
namespace shim {

/// E.g. "'/opt/app/app.kpack' (offers gfx1100, gfx942:sramecc+:xnack-);
/// not found: '/opt/app/app_gfx90a.kpack'". Ref is the wrapper's decoded
/// metadata and Env the environment the shim's loader searched with.
std::string describeArchiveSearch(const KpackMetadata &Ref,
                                  const KpackEnvironment &Env,
                                  const std::string &BinaryPath,
                                  const std::vector<TargetId> &Agents);

} // namespace shim
} // namespace kpack

#endif
