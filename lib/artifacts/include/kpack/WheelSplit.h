//===- kpack/WheelSplit.h - Host and device wheels --------------*- C++ -*-===//
//
// `kpack split-wheel` and `kpack recombine-wheels` (docs/wheels.md): a fat
// ROCm wheel becomes a host wheel (every fat ELF file converted through the
// emission library, database files removed, one extra per target) and one
// device wheel per target ID holding that target's archive under
// _<dist>_kpack/ and its database files; recombination overlays device
// wheels onto their host wheel again. Outputs are deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_WHEELSPLIT_H
#define KPACK_WHEELSPLIT_H

#include "kpack/Emission.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kpack {

/// The distribution of the device wheel of TargetId for the distribution
/// whose file-name form is Dist: "<dist>_device_<target>" with the target
/// as targetIdNamePart(TargetId, '_') ("pkg_device_gfx90a_xnack_plus").
std::string deviceDistributionName(llvm::StringRef Dist,
                                   llvm::StringRef TargetId);
/// The extra that pulls that device wheel: targetIdNamePart(TargetId, '-')
/// ("gfx942", "gfx11-generic", "gfx90a-xnack-plus").
std::string deviceExtraName(llvm::StringRef TargetId);
/// The directory, relative to the install root, that holds the archives:
/// "_<dist>_kpack" (no __init__.py: several device wheels overlay it).
std::string kpackDirectoryName(llvm::StringRef Dist);

struct WheelSplitOptions {
  std::string OutputDir;
  /// Target IDs to write device wheels for; empty: every target the wheel
  /// holds code or database files for. Code and database files of other
  /// targets are left out.
  std::vector<std::string> Targets;
  /// Kernel-database handler names (`--split-databases`).
  std::vector<std::string> DatabaseHandlers;
  CompressionSettings Compression;
  unsigned Threads = 0; ///< 0: all cores
};

/// One wheel written.
struct WrittenWheel {
  std::string Path;
  std::string TargetId; ///< empty for the host wheel
  uint64_t Size = 0;
  unsigned Files = 0; ///< entries, RECORD included
};

struct WheelSplitResult {
  WrittenWheel Host;
  std::vector<WrittenWheel> Devices; ///< sorted by target ID
  unsigned ConvertedBinaries = 0;
  unsigned DatabaseFiles = 0;
  unsigned DroppedFiles = 0; ///< database files of unselected targets
};

/// Splits FatWheel into OptionsOutputDir/<same file name> (host) and one
/// device wheel per target. The input is never modified; an output path
/// equal to the input is an error.
llvm::Expected<WheelSplitResult> splitWheel(llvm::StringRef FatWheel,
                                            const WheelSplitOptions &Options);

/// One wheel from a host wheel and device wheels split from the same fat
/// wheel: the device wheels' files overlaid onto the host's, their
/// Requires-Dist lines dropped from METADATA. Output's file name must name
/// the host's distribution, version and tags (its build tag may differ).
llvm::Expected<WrittenWheel>
recombineWheels(llvm::StringRef HostWheel,
                llvm::ArrayRef<std::string> DeviceWheels,
                llvm::StringRef Output);

} // namespace kpack

#endif
