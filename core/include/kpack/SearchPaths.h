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

/// Splits the value of ROCM_KPACK_PATH or ROCM_KPACK_PATH_PREFIX into its
/// entries (docs/runtime.md, "ROCM_KPACK_PATH"): at Separator, empty entries
/// dropped. With ':' (POSIX) a piece that starts with a target feature
/// ("xnack+", "xnack-", "sramecc+", "sramecc-") is not an entry of its own but
/// the rest of the previous one, since archive names of feature targets
/// contain ':' ("/k/app_gfx90a:xnack+.kpack:/k/b.kpack" is two entries). With
/// ';' (Windows) nothing is joined: ':' separates nothing there.
std::vector<std::string> splitPathList(std::string_view Value, char Separator);

/// The entries of the environment variable Name (splitPathList with the
/// platform's separator, ':' or ';'); none when unset.
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

/// The last component of Path (all of it when it has no separator).
std::string fileNameOf(std::string_view Path);

/// One archive path template and where it came from.
struct SearchTemplate {
  enum class Origin { PathOverride, PathPrefix, Embedded };
  std::string Path; ///< may hold @GFXARCH@
  Origin From = Origin::Embedded;
  /// The environment entry or embedded search path it was made from.
  std::string Entry;
};
const char *searchOriginName(SearchTemplate::Origin O);

/// The archive path templates for a HIPK binary, in priority order:
/// ROCM_KPACK_PATH alone when set; otherwise ROCM_KPACK_PATH_PREFIX, then
/// the metadata's search paths, relative ones resolved against the directory
/// of BinaryPath (the file holding the metadata). An environment entry is an
/// archive file, an @GFXARCH@ template, or a directory (an existing one, or
/// an entry ending in a directory separator): a directory D stands for
/// D/<file name> for the file name of each embedded search path, in their
/// order ("../.kpack/app_@GFXARCH@.kpack" gives D/app_@GFXARCH@.kpack).
std::vector<SearchTemplate>
searchTemplates(const KpackEnvironment &Env,
                const std::vector<std::string> &EmbeddedPaths,
                std::string_view BinaryPath);

/// searchTemplates' paths alone.
std::vector<std::string>
searchPathTemplates(const KpackEnvironment &Env,
                    const std::vector<std::string> &EmbeddedPaths,
                    std::string_view BinaryPath);

} // namespace kpack

#endif
