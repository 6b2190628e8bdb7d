//===- kpack/SearchPaths.h - Where archives are looked for ------*- C++ -*-===//
//
// The one reading of the runtime environment (docs/FORMAT.md §3.3,
// docs/runtime.md) and the one resolution of a HIPK binary's search paths
// (§3.2), shared by the loader (librocm_kpack), the registration shim and
// the stand-in HIP runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SEARCHPATHS_H
#define KPACK_SEARCHPATHS_H

#include <string>
#include <string_view>
#include <vector>

namespace kpack {

/// Upstream's rule for a boolean variable: set when non-empty and not
/// starting with '0'.
bool envFlag(const char *Name);

/// A ':'-separated list of paths from the environment; empty items dropped.
std::vector<std::string> envPathList(const char *Name);

/// The kpack environment, read once (kpack_cache_create).
struct KpackEnvironment {
  std::vector<std::string> PathOverride; ///< ROCM_KPACK_PATH
  std::vector<std::string> PathPrefix;   ///< ROCM_KPACK_PATH_PREFIX
  /// ROCM_KPACK_ARCH_OVERRIDE split into target IDs (splitTargetIdList).
  std::vector<std::string> ArchOverride;
  /// ROCM_KPACK_ARCH_OVERRIDE was set but not a list of target IDs; it is
  /// then ignored.
  bool ArchOverrideMalformed = false;
  bool Disabled = false; ///< ROCM_KPACK_DISABLE
  bool Debug = false;    ///< ROCM_KPACK_DEBUG

  static KpackEnvironment fromProcess();
};

/// Every variable KpackEnvironment::fromProcess reads (tests clear them).
inline constexpr const char *KpackEnvironmentVariables[] = {
    "ROCM_KPACK_PATH", "ROCM_KPACK_PATH_PREFIX", "ROCM_KPACK_DISABLE",
    "ROCM_KPACK_DEBUG", "ROCM_KPACK_ARCH_OVERRIDE"};

constexpr std::string_view ArchPlaceholder = "@GFXARCH@";

/// Template with its first "@GFXARCH@" replaced by Arch (upstream replaces
/// the first occurrence only).
std::string expandArchPlaceholder(std::string_view Template,
                                  std::string_view Arch);

/// The directory of Path ("." for a bare name, "/" for "/x").
std::string directoryOf(std::string_view Path);

/// The archive path templates for a HIPK binary, in priority order:
/// ROCM_KPACK_PATH alone when set; otherwise ROCM_KPACK_PATH_PREFIX, then
/// the metadata's search paths, relative ones resolved against the directory
/// of BinaryPath (the file holding the metadata).
std::vector<std::string>
searchPathTemplates(const KpackEnvironment &Env,
                    const std::vector<std::string> &EmbeddedPaths,
                    std::string_view BinaryPath);

} // namespace kpack

#endif
