//===- kpack/WheelSplit.h - Host and device wheels --------------*- C++ -*-===//
//
// `kpack split-wheel` and `kpack recombine-wheels` (docs/wheels.md): a fat
// ROCm wheel becomes, as upstream's split_python_wheels writes them, a host
// wheel (every fat ELF or PE file under the overlay root converted through
// the emission library, database files removed, one `device-<gpu>` extra
// per GPU a device wheel serves) and one device wheel per rocm_bootstrap bundle key holding the
// archives under <overlay>/.kpack/ and its database files; recombination
// overlays device wheels onto their host wheel again. Outputs are
// deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_WHEELSPLIT_H
#define KPACK_WHEELSPLIT_H

#include "kpack/Emission.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kpack {

struct WheelSplitOptions {
  std::string OutputDir;
  /// Device distributions are "<prefix>-<bundle key>" (`--device-package-
  /// prefix`); empty: "<normalised host name>-device".
  std::string DevicePackagePrefix;
  /// The directory of the wheel whose fat binaries are converted and under
  /// which .kpack/ goes (`--overlay-root`, "torch/"); empty: the one name
  /// of top_level.txt.
  std::string OverlayRoot;
  /// Extra Requires-Dist lines of target-level device wheels; "@GFXARCH@"
  /// becomes the bundle key.
  std::vector<std::string> DeviceRequiresDist;
  /// Target IDs to keep; empty: every target the wheel holds. Code objects
  /// and database files of other targets are left out.
  std::vector<std::string> Targets;
  /// Kernel-database handler names (`--databases`, `--wheel-type`).
  std::vector<std::string> DatabaseHandlers;
  /// Exploded directories instead of .whl files (`--output-format`).
  bool DirectoryOutput = false;
  /// Also the PEP 817 variant wheel, "<host>-<VariantLabel>.whl".
  bool GenerateVariantWheel = false;
  std::string VariantLabel = "variant";
  /// Where scratch files go; empty: a directory in OutputDir.
  std::string TmpDir;
  CompressionSettings Compression;
  unsigned Threads = 0; ///< 0: all cores
  /// Called with one line per step when set (`--verbose`).
  std::function<void(const std::string &)> Log;
};

/// One wheel (or exploded wheel directory) written.
struct WrittenWheel {
  std::string Path;
  std::string BundleKey; ///< empty for the host and the variant wheel
  uint64_t Size = 0;
  unsigned Files = 0; ///< entries, RECORD included
};

struct WheelSplitResult {
  WrittenWheel Host;
  std::optional<WrittenWheel> Variant;
  std::vector<WrittenWheel> Devices; ///< sorted by bundle key
  std::vector<std::string> Architectures; ///< target IDs found, sorted
  /// The GPUs served, each with a device-<gpu> extra (sorted; listed in
  /// the host's <dist-info>/kpack_gpus.txt).
  std::vector<std::string> Gpus;
  unsigned ConvertedBinaries = 0;
  unsigned DatabaseFiles = 0;
  unsigned DroppedFiles = 0; ///< database files of unselected targets
  /// Fat binaries outside the overlay root, left as they are.
  std::vector<std::string> FatOutsideOverlay;
};

/// Splits FatWheel into OutputDir/<same file name> (host) and one device
/// wheel per bundle key (docs/wheels.md). Every output appears together or
/// none does (also on SIGINT/SIGTERM/SIGHUP); the input is never modified.
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
