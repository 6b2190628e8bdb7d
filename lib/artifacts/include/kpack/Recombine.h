//===- kpack/Recombine.h - TheRock's reduce step ----------------*- C++ -*-===//
//
// `kpack recombine` (FORMAT.md §5): split artifacts from several CI shards
// (`<shards>/<shard>/<component>_<target>/`) become one generic artifact per
// component, taken from the primary shard, and one artifact per architecture
// group holding the group's archives and kernel-database files, from
// whichever shard built them. The configuration is upstream
// recombine_artifacts' JSON (docs/therock.md).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_RECOMBINE_H
#define KPACK_RECOMBINE_H

#include "kpack/ArtifactTree.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace kpack {

struct ArchitectureGroup {
  std::string Name;        ///< the output artifact is <component>_<Name>
  std::string DisplayName; ///< the name if the configuration gives none
  /// Target IDs ("gfx1100", "gfx90a:xnack+"); a bare processor also takes
  /// that processor's artifacts with feature settings (gfx90a:xnack-).
  std::vector<std::string> Architectures;
};

struct RecombineConfig {
  std::string PrimaryShard;
  std::vector<ArchitectureGroup> Groups; ///< sorted by name
  bool ErrorOnDuplicateDeviceCode = true;
  bool VerifyGenericArtifactsMatch = false;
  bool ErrorOnMissingArchitecture = false;
};

/// Parses upstream's configuration. Keys upstream does not read are
/// ignored, as upstream does; missing or mistyped required ones, an empty
/// architecture list and architectures not starting with "gfx" are errors.
/// Path only names the file in messages.
llvm::Expected<RecombineConfig> parseRecombineConfig(llvm::StringRef Text,
                                                     llvm::StringRef Path);
llvm::Expected<RecombineConfig> readRecombineConfig(llvm::StringRef Path);

struct RecombineOptions {
  std::string ShardsDir, OutputDir;
  /// Only this component (error if no shard has it).
  std::optional<std::string> Component;
  /// HardLinkFirst shares the inputs' inodes: fine for packaging, but a
  /// later in-place edit of an output would change the shard too.
  CopyMode Mode = CopyMode::HardLinkFirst;
  /// Progress lines (--verbose); none if null.
  llvm::raw_ostream *Log = nullptr;
};

/// Writes the output artifacts, all of them or (on error) none. Returns
/// their names, sorted.
llvm::Expected<std::vector<std::string>>
recombineArtifacts(const RecombineConfig &Config, const RecombineOptions &Opts);

} // namespace kpack

#endif
