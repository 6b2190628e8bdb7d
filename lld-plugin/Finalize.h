//===- Finalize.h - Post-link step of ld.kpack -------------------*- C++ -*-===//
//
// Turns a linked image of kpack-ready objects into the final host binary and
// its .kpack archives (FORMAT.md §4, docs/kpack-ready.md "What the link-time
// step does"): wrappers become HIPK with reserved1 = N, all point at one
// metadata record written over `.rocm_kpack_ref`, and the archives get the
// code objects of the live keys as "<kernel_name>#N".
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_LLD_FINALIZE_H
#define KPACK_LLD_FINALIZE_H

#include "InputRewriter.h"
#include "LinkOptions.h"

#include "kpack/ArchivePaths.h"
#include "kpack/Emission.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kpack {
namespace link {

/// Names and paths derived from the options and the output path.
struct EmitPlan {
  std::string KernelName;
  std::vector<std::string> SearchPaths; ///< what the metadata records
  /// --kpack-output: the one archive. --kpack-dir: the directory and the
  /// file-name prefix "<name>_" of the per-target archives.
  std::string ArchivePath;
  std::string ArchiveDir;
  /// --kpack-compression and --kpack-compression-level, checked as every
  /// writer checks them (a level of 0 without a scheme: no compression).
  CompressionSettings Compression;
};

/// The archives' compression: --kpack-compression and
/// --kpack-compression-level checked by the one check of every writer
/// (CompressionSettings::parse); a level of 0 without a scheme means none.
llvm::Expected<CompressionSettings> compressionOf(const KpackOptions &Opts);

/// Computes the plan; search paths default to the archive location relative
/// to the output's directory.
llvm::Expected<EmitPlan> planEmission(const KpackOptions &Opts,
                                      llvm::StringRef OutputPath);

/// The msgpack metadata record the plan's binary gets (FORMAT.md §3.2),
/// with the link identity of its archives (LinkId; before the link, a
/// placeholder of the same length sizes the room).
llvm::Expected<std::vector<uint8_t>>
encodePlanMetadata(const EmitPlan &Plan, llvm::StringRef LinkId);

/// Reads the image lld wrote to LinkedPath, finalizes it, and commits the
/// archives and OutputPath (with LinkedPath's mode) together; then removes
/// the per-target archives the previous link of OutputPath wrote that this
/// one did not (staleArchives()).
llvm::Error finalizeOutput(llvm::StringRef LinkedPath,
                           llvm::StringRef OutputPath,
                           const KpackOptions &Opts, const EmitPlan &Plan,
                           const PayloadStore &Payloads);

} // namespace link
} // namespace kpack

#endif
