//===- kpack/BundleKeys.h - rocm_bootstrap's packaging bundles --*- C++ -*-===//
//
// The device wheels of `kpack split-wheel` follow rocm_bootstrap's packaging
// hierarchy (FORMAT.md §6): every target has a chain target -> sub-family ->
// family (gfx1151 -> gfx11_5 -> gfx11), each level a "bundle" with a key and
// a device distribution "<prefix>-<key with _ -> ->". These are the tables
// and the rules that map a code object's target ID, a database file's target
// or an AOTriton family directory to a bundle key.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_BUNDLEKEYS_H
#define KPACK_BUNDLEKEYS_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace kpack {

enum class BundleLevel { Target, SubFamily, Family };

struct PackagingBundle {
  std::string Key;         ///< "gfx942", "gfx9_4", "gfx9"
  BundleLevel Level;
  std::string DisplayName; ///< rocm_bootstrap's display_name ("MI300")
};

/// The bundle named Key (any level), or none.
std::optional<PackagingBundle> lookupBundle(llvm::StringRef Key);

/// The packaging chain of a target-level key: (target, sub-family, family);
/// empty for a key that is not a known target.
std::vector<PackagingBundle> packagingChain(llvm::StringRef TargetKey);

/// The bundle key of a target as a code object or a database handler names
/// it: a target ID's processor without its features (xnack variants share
/// the bare target's wheel; "gfx90a-xnack+" as Tensile spells it too), an
/// LLVM generic processor the bundle it stands for ("gfx11-generic" ->
/// "gfx11", "gfx9-4-generic" -> "gfx9_4"), a bundle key as it is ("gfx11",
/// "gfx12_0"), an AOTriton family directory name its family or sub-family
/// ("gfx11xx" -> "gfx11", "gfx120x" -> "gfx12_0"); none otherwise.
std::optional<std::string> bundleKeyFor(llvm::StringRef Target);

/// The bundle key of an AOTriton family directory in a path relative to the
/// overlay root (".../aotriton.images/amd-gfx11xx/..." -> "gfx11"), or none
/// if the path is not in such a directory. Target directories
/// ("amd-gfx942") are the database handler's.
std::optional<std::string> aotritonFamilyBundle(llvm::StringRef RelPath);

/// "<prefix>-<key with '_' -> '-'>" ("amd-torch-device-gfx11-5").
std::string deviceDistName(llvm::StringRef Prefix, llvm::StringRef Key);

/// All known bundle keys, for error messages.
std::string knownBundleKeys();

} // namespace kpack

#endif
